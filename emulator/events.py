"""The event log: every state change as one event with a strictly increasing sequence number.

Events are staged during a mutation, written in the mutation's transaction, and published to waiting
subscribers only after the commit, so an observer never sees a change that a crash could take back.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from typing import Any

from .store import Store, Transaction

MEMORY_WINDOW = 50_000
STORE_WINDOW = 1_000_000


class EventsGone(Exception):
    """The requested resume point is older than the retained window; the observer must re-list."""


class EventLog:
    def __init__(self, store: Store) -> None:
        self._store = store
        _, self.last_seq = store.event_bounds()
        self._recent: deque[tuple[int, str]] = deque(maxlen=MEMORY_WINDOW)
        self._staged: list[tuple[int, str]] = []
        self._waiters: set[asyncio.Event] = set()
        self._commits = 0

    def stage(self, type_: str, time_ms: int, *, node: str | None = None, phy_id: int | None = None,
              data: dict[str, Any] | None = None) -> None:
        seq = self.last_seq + len(self._staged) + 1
        body = json.dumps({"seq": seq, "type": type_, "time_ms": time_ms, "node": node, "phy_id": phy_id,
                           "data": data or {}}, separators=(",", ":"))
        self._staged.append((seq, body))

    def write_staged(self, tx: Transaction) -> None:
        if self._staged:
            tx.add_events(self._staged)

    def publish_staged(self) -> None:
        """Call after the transaction holding the staged events committed."""
        if not self._staged:
            return
        self._recent.extend(self._staged)
        self.last_seq = self._staged[-1][0]
        self._staged = []
        for waiter in self._waiters:
            waiter.set()
        self._commits += 1
        if self._commits % 1000 == 0:
            self._store.trim_events(STORE_WINDOW)

    def discard_staged(self) -> None:
        self._staged = []

    def after(self, seq: int, limit: int = 1000) -> list[tuple[int, str]]:
        """Events with sequence numbers > seq, oldest first, at most `limit`."""
        if seq >= self.last_seq:
            return []
        if self._recent and seq + 1 >= self._recent[0][0]:
            start = seq + 1 - self._recent[0][0]
            return [self._recent[i] for i in range(start, min(len(self._recent), start + limit))]
        oldest, _ = self._store.event_bounds()
        if seq + 1 < oldest:
            raise EventsGone(f"events after {seq} are no longer retained (oldest is {oldest}); re-list the state")
        return self._store.events_after(seq, limit)

    def waiter(self) -> asyncio.Event:
        event = asyncio.Event()
        self._waiters.add(event)
        return event

    def drop_waiter(self, event: asyncio.Event) -> None:
        self._waiters.discard(event)
