"""Fault target selectors: which chips of the inventory a fault lands on."""

from __future__ import annotations

import random
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .inventory import Inventory, NodeInfo

ChipKey = tuple[str, int]


class Selector(BaseModel):
    """Exactly one scope (node, tor, super_pod, cluster); optionally narrowed to chips or a ring of a node,
    and optionally sampled down to `random` chips drawn with `seed`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node: str | None = None
    chips: Annotated[list[int], Field(min_length=1, max_length=64)] | None = None
    ring: int | None = Field(default=None, ge=0)
    tor: int | None = Field(default=None, ge=0)
    super_pod: int | None = Field(default=None, ge=0)
    cluster: bool = False
    random: int | None = Field(default=None, ge=1)
    seed: int | None = None

    @model_validator(mode="after")
    def _one_scope(self) -> Selector:
        scopes = [s for s, on in (("node", self.node is not None), ("tor", self.tor is not None),
                                  ("super_pod", self.super_pod is not None), ("cluster", self.cluster)) if on]
        if len(scopes) > 1:
            raise ValueError(f"selector has more than one scope: {', '.join(scopes)}")
        if not scopes and self.random is None:
            raise ValueError("selector needs a scope: node, tor, super_pod, cluster, or random")
        if (self.chips is not None or self.ring is not None) and self.node is None:
            raise ValueError("'chips' and 'ring' need 'node'")
        if self.chips is not None and self.ring is not None:
            raise ValueError("give 'chips' or 'ring', not both")
        if self.seed is not None and self.random is None:
            raise ValueError("'seed' needs 'random'")
        return self


def _nodes_in_scope(sel: Selector, inv: Inventory) -> list[NodeInfo]:
    if sel.node is not None:
        return [inv.node(sel.node)]
    if sel.tor is not None:
        nodes = [n for n in inv.nodes.values() if n.tor_id == sel.tor]
        if not nodes:
            raise LookupError(f"no node is in ToR {sel.tor}")
        return nodes
    if sel.super_pod is not None:
        nodes = [n for n in inv.nodes.values() if n.super_pod_id == sel.super_pod]
        if not nodes:
            raise LookupError(f"no node is in SuperPoD {sel.super_pod}")
        return nodes
    return list(inv.nodes.values())


def resolve(sel: Selector, inv: Inventory) -> list[ChipKey]:
    """The chips `sel` names, in inventory order. Raises LookupError naming what does not exist."""
    nodes = _nodes_in_scope(sel, inv)
    if sel.chips is not None:
        node = nodes[0]
        seen = set()
        for phy in sel.chips:
            inv.chip(node.name, phy)
            seen.add(phy)
        keys = [(node.name, phy) for phy in sorted(seen)]
    elif sel.ring is not None:
        node = nodes[0]
        spec = node.profile.spec
        groups = spec.topology.sio_pairs or spec.topology.rings
        if sel.ring >= len(groups):
            raise LookupError(f"node {node.name!r} has no ring {sel.ring} (it has rings 0-{len(groups) - 1})")
        keys = [(node.name, phy) for phy in sorted(groups[sel.ring])]
    else:
        keys = [(n.name, c.phy_id) for n in nodes for c in n.chips]
    if sel.random is not None:
        if sel.random > len(keys):
            raise ValueError(f"selector asks for {sel.random} random chips but its scope has {len(keys)}")
        rng = random.Random(sel.seed)
        picked = set(rng.sample(range(len(keys)), sel.random))
        keys = [k for i, k in enumerate(keys) if i in picked]
    return keys
