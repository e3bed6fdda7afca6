"""SQLite (WAL) persistence of the emulator state.

Each mutation is one transaction; the REST API acknowledges only after it commits, so a restart (even
after kill -9) restores exactly what was acknowledged. Tables hold the cluster definition, the touched
chips' state, the faults, the event log and a few counters.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

SCHEMA_VERSION = 1
Durability = Literal["full", "normal"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chips (node TEXT NOT NULL, phy INTEGER NOT NULL, state TEXT NOT NULL,
                                  PRIMARY KEY (node, phy));
CREATE TABLE IF NOT EXISTS faults (id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, body TEXT NOT NULL);
"""


class Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def put_meta(self, key: str, value: Any) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def put_chip(self, node: str, phy: int, state: dict[str, Any]) -> None:
        self._conn.execute("INSERT OR REPLACE INTO chips VALUES (?, ?, ?)", (node, phy, json.dumps(state)))

    def put_fault(self, fault_id: str, body: dict[str, Any]) -> None:
        self._conn.execute("INSERT OR REPLACE INTO faults VALUES (?, ?)", (fault_id, json.dumps(body)))

    def add_events(self, events: list[tuple[int, str]]) -> None:
        self._conn.executemany("INSERT INTO events VALUES (?, ?)", events)


class Store:
    def __init__(self, path: str | Path, durability: Durability = "normal") -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA synchronous={'FULL' if durability == 'full' else 'NORMAL'}")
        self._conn.executescript(_SCHEMA)
        version = self.get_meta("schema_version")
        if version is None:
            with self.transaction() as tx:
                tx.put_meta("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise RuntimeError(f"{self.path} has schema version {version}; this npu-emu reads {SCHEMA_VERSION}")

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield Transaction(self._conn)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def get_meta(self, key: str) -> Any:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def chips(self) -> Iterator[tuple[str, int, dict[str, Any]]]:
        for node, phy, state in self._conn.execute("SELECT node, phy, state FROM chips"):
            yield node, phy, json.loads(state)

    def faults(self) -> Iterator[dict[str, Any]]:
        for (body,) in self._conn.execute("SELECT body FROM faults"):
            yield json.loads(body)

    def events_after(self, seq: int, limit: int) -> list[tuple[int, str]]:
        rows = self._conn.execute("SELECT seq, body FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (seq, limit))
        return list(rows)

    def event_bounds(self) -> tuple[int, int]:
        """(oldest retained seq, newest seq); (0, 0) when there are none."""
        lo, hi = self._conn.execute("SELECT MIN(seq), MAX(seq) FROM events").fetchone()
        return (lo or 0, hi or 0)

    def trim_events(self, keep: int) -> None:
        self._conn.execute("DELETE FROM events WHERE seq <= (SELECT MAX(seq) FROM events) - ?", (keep,))

    def close(self) -> None:
        self._conn.close()
