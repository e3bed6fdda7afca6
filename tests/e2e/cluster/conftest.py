"""The control-plane e2e tests use the npu_emu pytest plugin's fixtures (control_plane, kube_client,
ascend_fleet, ascend_nodes_factory) plus a namespace per test."""

from __future__ import annotations

import time
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
    # Pods are refused until the service-account controller has made the namespace's "default".
    deadline = time.monotonic() + 30
    while not core.list_namespaced_service_account(name, field_selector="metadata.name=default").items:
        if time.monotonic() > deadline:
            raise AssertionError(f"namespace {name}: no default service account after 30s")
        time.sleep(0.1)
    yield name
    core.delete_namespace(name, propagation_policy="Background")
