"""The controller's work queue: one entry per key, one worker per key, delayed adds."""

from __future__ import annotations

import time

from cluster.ascendjob.workqueue import WorkQueue


def test_keys_are_deduplicated_and_handled_again_when_added_while_active() -> None:
    q = WorkQueue()
    q.add("a")
    q.add("a")
    q.add("b")
    assert len(q) == 2
    assert q.get(0) == "a"
    q.add("a")  # while "a" is being handled: not handed to a second worker
    assert q.get(0) == "b"
    assert q.get(0) is None
    q.done("a")  # ... but handled again afterwards
    assert q.get(0) == "a"
    q.done("a")
    q.done("b")
    assert q.get(0) is None


def test_delayed_add() -> None:
    q = WorkQueue()
    q.add("a", delay_s=0.2)
    assert q.get(0.05) is None
    start = time.monotonic()
    assert q.get(2.0) == "a"
    assert 0.1 < time.monotonic() - start < 1.5


def test_close_wakes_waiters() -> None:
    q = WorkQueue()
    q.close()
    assert q.get(5.0) is None
