"""Placement: 4-chip pods on 910A stay inside one HCCS ring; a gang larger than the free chips binds
none of its pods until capacity frees."""

from __future__ import annotations

import time
from typing import Any

import pytest
from acjob_e2e_helpers import Api, acjob, chips_of, replica, running, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]


def test_910a_four_chip_pods_stay_inside_one_hccs_ring(acjob_stack: Any, acjob_namespace: str) -> None:
    api = Api(acjob_stack.api_client, acjob_namespace)
    selector = {**acjob_stack.pool_selector("a"), "accelerator-type": "module"}
    body = acjob("rings", "pytorch", {"Master": replica("Master", 1, 4, selector),
                                      "Worker": replica("Worker", 3, 4, selector)})
    api.create_job(body)
    wait_for("4 pods Running", lambda: running(api.pods("rings"), 4), timeout_s=120)
    table = wait_for("completed rank table", lambda: api.completed_ranktable("rings"), timeout_s=60)
    assert table["server_count"] == "4"
    used = []
    for pod in api.pods("rings"):
        node, chips = chips_of(pod)
        assert node in acjob_stack.nodes["a"]
        assert len(chips) == 4
        assert set(chips) in ({0, 1, 2, 3}, {4, 5, 6, 7}), (pod.metadata.name, chips)
        used += [(node, c) for c in chips]
    assert len(set(used)) == 16  # both 910A nodes full, no chip twice


def test_gang_larger_than_free_chips_waits_then_starts(acjob_stack: Any, acjob_namespace: str) -> None:
    api = Api(acjob_stack.api_client, acjob_namespace)
    pool = acjob_stack.pool_selector("b")
    # A: three 8-chip pods on the four 910B nodes; one node stays free.
    api.create_job(acjob("big-a", "pytorch", {"Master": replica("Master", 1, 8, pool),
                                              "Worker": replica("Worker", 2, 8, pool)}))
    wait_for("A Running", lambda: running(api.pods("big-a"), 3), timeout_s=120)
    # B: two 8-chip pods, gang of two; only one 910B node is free.
    uid = api.create_job(acjob("big-b", "pytorch", {"Master": replica("Master", 1, 8, pool),
                                                    "Worker": replica("Worker", 1, 8, pool)}))["metadata"]["uid"]
    wait_for("B's PodGroup", lambda: api.podgroup(f"big-b-{uid}"))
    deadline = time.monotonic() + 8  # many scheduling cycles (schedule period 200 ms)
    while time.monotonic() < deadline:
        pods = api.pods("big-b")
        assert not [p.metadata.name for p in pods if p.spec.node_name], "a pod of the waiting gang was bound"
        time.sleep(0.5)
    phase = (api.podgroup(f"big-b-{uid}") or {}).get("status", {}).get("phase")
    assert phase in (None, "Pending", "Inqueue"), phase
    if phase in (None, "Pending"):  # the operator creates no pod before Volcano enqueues the gang
        assert api.pods("big-b") == []
    assert not api.condition_true("big-b", "Running")
    table = api.ranktable("big-b")
    assert table is None or table["status"] == "initializing"

    # A goes; its chips come back and B starts on two nodes with a completed rank table.
    api.delete_job("big-a")
    pods = wait_for("B Running", lambda: running(api.pods("big-b"), 2), timeout_s=120)
    assert len({p.spec.node_name for p in pods}) == 2
    wait_for("B's rank table", lambda: api.completed_ranktable("big-b"), timeout_s=60)
    wait_for("B Running condition", lambda: api.condition_true("big-b", "Running"))
