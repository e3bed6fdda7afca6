"""Test support: an emulated node's devfs built by the real emulator (engine + devfs materialiser).

Not on the wrapper's or the hook's path (it imports the emulator). Tests and users' own suites call
`emulated_node_root(tmp_path, lost=[3])` to get a node root with /dev/davinci*, the driver tree, the
npu-smi launcher, node.json and base.list, with the given chips card-lost through a real fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .node_root import NodeRoot


@dataclass(frozen=True)
class EmulatedNode:
    root: NodeRoot
    node: dict[str, Any]
    chips: list[dict[str, Any]]
    char_devices: bool


def emulated_node_root(workdir: Path, *, cluster: str = "default",
                       lost: tuple[int, ...] = ()) -> EmulatedNode:
    """Run the emulator's engine on a fresh state in `workdir` and materialise its first node's devfs."""
    from emulator import devfs
    from emulator.engine import FaultRequest
    from emulator.profiles import load_cluster_spec
    from emulator.service import EmulatorOptions, open_engine

    workdir.mkdir(parents=True, exist_ok=True)
    engine = open_engine(EmulatorOptions(state_path=workdir / "state.db", cluster=load_cluster_spec(cluster)))
    try:
        name = sorted(engine.inventory.nodes)[0]
        if lost:
            engine.inject(FaultRequest.model_validate(
                {"selector": {"node": name, "chips": list(lost)}, "kind": "card-lost"}))
        doc = engine.node(name)
    finally:
        engine.store.close()
    chips = doc.pop("chips")
    root = workdir / "node"
    result = devfs.materialise(doc, chips, root)
    return EmulatedNode(NodeRoot(root), doc, chips, result.char_devices)
