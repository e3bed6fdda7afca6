"""A work queue of job keys: a key is queued at most once, and handled by one worker at a time (a key
added while it is being handled is handled again afterwards). Keys may be added with a delay."""

from __future__ import annotations

import heapq
import threading
import time

__all__ = ["WorkQueue"]


class WorkQueue:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._ready: list[str] = []
        self._queued: set[str] = set()
        self._active: set[str] = set()
        self._again: set[str] = set()
        self._delayed: list[tuple[float, str]] = []
        self._closed = False

    def add(self, key: str, delay_s: float = 0.0) -> None:
        with self._cond:
            if delay_s > 0:
                heapq.heappush(self._delayed, (time.monotonic() + delay_s, key))
            elif key in self._active:
                self._again.add(key)
            elif key not in self._queued:
                self._queued.add(key)
                self._ready.append(key)
            self._cond.notify()

    def get(self, timeout_s: float = 1.0) -> str | None:
        """The next key to handle (mark it done() afterwards), or None on timeout / close."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                now = time.monotonic()
                while self._delayed and self._delayed[0][0] <= now:
                    _, key = heapq.heappop(self._delayed)
                    if key in self._active:
                        self._again.add(key)
                    elif key not in self._queued:
                        self._queued.add(key)
                        self._ready.append(key)
                if self._ready:
                    key = self._ready.pop(0)
                    self._queued.discard(key)
                    self._active.add(key)
                    return key
                if self._closed or now >= deadline:
                    return None
                wait = deadline - now
                if self._delayed:
                    wait = min(wait, max(0.0, self._delayed[0][0] - now))
                self._cond.wait(wait)

    def done(self, key: str) -> None:
        with self._cond:
            self._active.discard(key)
            if key in self._again:
                self._again.discard(key)
                if key not in self._queued:
                    self._queued.add(key)
                    self._ready.append(key)
                self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._ready) + len(self._delayed)
