"""Leader election on a coordination.k8s.io/v1 Lease, so that two controllers on one cluster (a harness
and a test, say) never reconcile the same job at once: only the holder works, the others watch.

The holder renews every `retry_s`; a lease not renewed for `duration_s` may be taken over. Takeovers
and renewals are PUTs with the lease's resourceVersion, so two contenders cannot both win.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from kubernetes.client.exceptions import ApiException

from .kube import Kube

__all__ = ["LeaderElector", "default_identity"]

log = logging.getLogger(__name__)

LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
DEFAULT_LEASE = "ascendjob-controller"


def default_identity() -> str:
    return f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:6]}"


def _micro(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


class LeaderElector:
    def __init__(self, kube: Kube, *, namespace: str = "kube-system", name: str = DEFAULT_LEASE,
                 identity: str | None = None, duration_s: int = 15, retry_s: float = 2.0) -> None:
        self.kube = kube
        self.path = LEASES.format(ns=namespace) + f"/{name}"
        self.collection = LEASES.format(ns=namespace)
        self.name = name
        self.identity = identity or default_identity()
        self.duration_s = duration_s
        self.retry_s = retry_s
        self.leading = threading.Event()
        self.on_start_leading: list[Any] = []

    def try_acquire_or_renew(self, now: datetime | None = None) -> bool:
        """One round; returns whether this process holds the lease afterwards."""
        now = now or datetime.now(UTC)
        lease = self.kube.get(self.path)
        spec: dict[str, Any] = dict((lease or {}).get("spec") or {})
        holder = spec.get("holderIdentity")
        if lease is not None and holder and holder != self.identity:
            renewed = _parse(spec.get("renewTime")) or _parse(spec.get("acquireTime"))
            duration = int(spec.get("leaseDurationSeconds") or self.duration_s)
            if renewed is not None and now < renewed + timedelta(seconds=duration):
                return self._set(False)
        ours = {"holderIdentity": self.identity, "leaseDurationSeconds": self.duration_s, "renewTime": _micro(now)}
        if holder == self.identity and spec.get("acquireTime"):
            ours["acquireTime"] = spec["acquireTime"]
            ours["leaseTransitions"] = spec.get("leaseTransitions", 0)
        else:
            ours["acquireTime"] = _micro(now)
            ours["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if lease is not None else 0)
        try:
            if lease is None:
                body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"name": self.name}, "spec": ours}
                if self.kube.create(self.collection, body) is None:
                    return self._set(False)  # someone created it first
            else:
                lease["spec"] = ours
                self.kube.call("PUT", self.path, body=lease)  # carries resourceVersion: 409 if it moved
        except ApiException as e:
            if e.status == 409:
                return self._set(False)
            raise
        return self._set(True)

    def _set(self, leading: bool) -> bool:
        if leading and not self.leading.is_set():
            log.info("leading (lease %s, identity %s)", self.name, self.identity)
            self.leading.set()
            for callback in self.on_start_leading:
                callback()
        elif not leading and self.leading.is_set():
            log.warning("lost the lease %s", self.name)
            self.leading.clear()
        return leading

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.try_acquire_or_renew()
            except Exception as e:  # the apiserver is away: stop working until the lease is ours again
                log.warning("lease %s: %s", self.name, e)
                self._set(False)
            stop.wait(self.retry_s)

    def release(self) -> None:
        """Give the lease up on a clean stop, so a successor need not wait for it to expire."""
        if not self.leading.is_set():
            return
        lease = self.kube.get(self.path)
        if lease and (lease.get("spec") or {}).get("holderIdentity") == self.identity:
            lease["spec"]["holderIdentity"] = None
            lease["spec"]["renewTime"] = None
            try:
                self.kube.call("PUT", self.path, body=lease)
            except ApiException as e:
                log.debug("releasing lease %s: %s", self.name, e.reason)
        self.leading.clear()
