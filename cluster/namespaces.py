"""Waiting on namespaces of a test cluster: ready for pods, and gone with their pods."""

from __future__ import annotations

import contextlib
import time
from typing import Any

__all__ = ["delete_namespace_and_wait", "wait_service_account"]


def wait_service_account(core: Any, namespace: str, timeout_s: float = 60) -> None:
    """Pods can be created in a new namespace only once its `default` service account exists."""
    deadline = time.monotonic() + timeout_s
    while not core.list_namespaced_service_account(namespace, field_selector="metadata.name=default").items:
        if time.monotonic() > deadline:
            raise AssertionError(f"namespace {namespace}: no default service account after {timeout_s:.0f}s")
        time.sleep(0.1)


def delete_namespace_and_wait(core: Any, namespace: str, timeout_s: float = 120) -> None:
    from kubernetes.client.exceptions import ApiException

    with contextlib.suppress(ApiException):
        core.delete_namespace(namespace, propagation_policy="Background")
    deadline = time.monotonic() + timeout_s
    while core.list_namespaced_pod(namespace).items:
        if time.monotonic() > deadline:
            raise AssertionError(f"namespace {namespace}: pods left {timeout_s:.0f}s after deletion")
        time.sleep(0.25)
