"""Lease-based leader election: one holder at a time, takeover after expiry, release on stop."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from kubernetes.client.exceptions import ApiException

from cluster.ascendjob.leader import LeaderElector

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class FakeLeases:
    """get / create / PUT with resourceVersion checks, like the apiserver."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.version = 0

    def get(self, path: str) -> dict[str, Any] | None:
        obj = self.objects.get(path)
        return copy.deepcopy(obj) if obj else None

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        full = f"{path}/{body['metadata']['name']}"
        if full in self.objects:
            return None
        self.version += 1
        body = copy.deepcopy(body)
        body["metadata"]["resourceVersion"] = str(self.version)
        self.objects[full] = body
        return body

    def call(self, method: str, path: str, *, body: Any = None, **_: Any) -> Any:
        assert method == "PUT"
        if self.objects[path]["metadata"]["resourceVersion"] != body["metadata"]["resourceVersion"]:
            raise ApiException(status=409, reason="Conflict")
        self.version += 1
        body = copy.deepcopy(body)
        body["metadata"]["resourceVersion"] = str(self.version)
        self.objects[path] = body
        return body


def test_one_holder_then_takeover_after_expiry() -> None:
    kube = FakeLeases()
    a = LeaderElector(kube, identity="a", duration_s=15)  # type: ignore[arg-type]
    b = LeaderElector(kube, identity="b", duration_s=15)  # type: ignore[arg-type]
    started: list[str] = []
    b.on_start_leading.append(lambda: started.append("b"))

    assert a.try_acquire_or_renew(T0) and a.leading.is_set()
    assert not b.try_acquire_or_renew(T0 + timedelta(seconds=1))
    assert a.try_acquire_or_renew(T0 + timedelta(seconds=10))  # renewal
    assert not b.try_acquire_or_renew(T0 + timedelta(seconds=20))  # renewed at 10 s: still a's
    lease = next(iter(kube.objects.values()))["spec"]
    assert lease["holderIdentity"] == "a" and lease["leaseTransitions"] == 0

    assert b.try_acquire_or_renew(T0 + timedelta(seconds=26))  # a went quiet for 16 s
    assert started == ["b"]
    assert not a.try_acquire_or_renew(T0 + timedelta(seconds=27)) and not a.leading.is_set()
    lease = next(iter(kube.objects.values()))["spec"]
    assert lease["holderIdentity"] == "b" and lease["leaseTransitions"] == 1


def test_a_racing_contender_loses_on_the_resource_version() -> None:
    kube = FakeLeases()
    a = LeaderElector(kube, identity="a")  # type: ignore[arg-type]
    assert a.try_acquire_or_renew(T0)
    stale = kube.get(next(iter(kube.objects)))
    a.try_acquire_or_renew(T0 + timedelta(seconds=2))  # moves the resourceVersion on

    class Stale(FakeLeases):
        def get(self, path: str) -> dict[str, Any] | None:
            return copy.deepcopy(stale)

    racer = Stale()
    racer.objects = kube.objects
    b = LeaderElector(racer, identity="b")  # type: ignore[arg-type]
    assert not b.try_acquire_or_renew(T0 + timedelta(seconds=60))  # expired in its stale view, but 409


def test_release_lets_a_successor_in_at_once() -> None:
    kube = FakeLeases()
    a = LeaderElector(kube, identity="a")  # type: ignore[arg-type]
    b = LeaderElector(kube, identity="b")  # type: ignore[arg-type]
    assert a.try_acquire_or_renew(T0)
    a.release()
    assert not a.leading.is_set()
    assert b.try_acquire_or_renew(T0 + timedelta(seconds=1))
