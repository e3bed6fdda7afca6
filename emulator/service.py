"""Assembling an emulator: inventory, catalogue, store, clock and engine from a state file and options."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .catalogue import Catalogue, load_catalogue
from .clock import ClockAnchor, EmulatedClock
from .engine import Engine
from .inventory import Inventory
from .profiles import ClusterSpec, Profile
from .store import Durability, Store


class StateMismatch(Exception):
    """The state file was made for another cluster than the one asked for."""


@dataclass(slots=True)
class EmulatorOptions:
    state_path: Path
    cluster: ClusterSpec | None = None
    catalogue_path: Path | None = None
    speed: float | None = None
    durability: Durability = "normal"
    reset: bool = False


def open_engine(opts: EmulatorOptions) -> Engine:
    """Open (or create) the state at `opts.state_path` and return the engine over it.

    A state file remembers its cluster spec and profiles, so a restart needs no flags. Asking for a
    different cluster than the file holds is an error unless `reset` is set.
    """
    if opts.reset:
        for suffix in ("", "-wal", "-shm"):
            Path(str(opts.state_path) + suffix).unlink(missing_ok=True)
    store = Store(opts.state_path, opts.durability)
    stored_spec = store.get_meta("cluster_spec")
    if stored_spec is not None:
        spec = ClusterSpec.model_validate(stored_spec)
        if opts.cluster is not None and opts.cluster.model_dump() != spec.model_dump():
            store.close()
            raise StateMismatch(
                f"{opts.state_path} holds cluster {spec.metadata.name!r}, not {opts.cluster.metadata.name!r}; "
                "pass --reset to start over with the new cluster")
        profiles = {name: Profile.model_validate(p) for name, p in store.get_meta("profiles").items()}
        inventory = Inventory(spec, profiles)
    else:
        if opts.cluster is None:
            raise ValueError("a new state file needs a cluster spec")
        inventory = Inventory(opts.cluster)
        with store.transaction() as tx:
            tx.put_meta("cluster_spec", opts.cluster.model_dump())
            tx.put_meta("profiles", {n: p.model_dump() for n, p in inventory.profiles.items()})
    catalogue: Catalogue = load_catalogue(opts.catalogue_path)
    anchor = store.get_meta("clock")
    clock = EmulatedClock(ClockAnchor(*anchor) if anchor else None)
    if anchor is None:
        a = clock.anchor
        with store.transaction() as tx:
            tx.put_meta("clock", [a.wall_s, a.emulated_ms, a.speed])
    engine = Engine(inventory, catalogue, store, clock)
    if opts.speed is not None and opts.speed != clock.speed:
        engine.set_clock(speed=opts.speed)
    engine.tick()
    return engine


def describe(engine: Engine) -> str:
    inv = engine.inventory
    return json.dumps({"cluster": inv.spec.metadata.name, "nodes": len(inv.nodes), "chips": inv.chip_count})
