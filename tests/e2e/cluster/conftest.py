"""The control-plane e2e tests use the npu_emu pytest plugin's fixtures (control_plane, kube_client,
ascend_fleet, ascend_nodes_factory) plus a namespace per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def namespace(kube_client: Any) -> Iterator[str]:
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(kube_client)
    name = f"t-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name, propagation_policy="Background")
