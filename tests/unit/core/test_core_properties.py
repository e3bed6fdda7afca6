"""Property tests: the selector and the fault-level rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.inventory import Inventory
from emulator.levels import LEVELS_MOST_SEVERE_FIRST, kubelet_health, most_severe, network_health, severity
from emulator.profiles import load_cluster_spec
from emulator.selector import Selector, resolve

INV = Inventory(load_cluster_spec("mixed-small"))
NODES = sorted(INV.nodes)
levels = st.sampled_from(LEVELS_MOST_SEVERE_FIRST)


@given(st.lists(levels, min_size=1))
def test_most_severe_is_an_element_no_less_severe_than_any(ls: list[str]) -> None:
    worst = most_severe(ls)
    assert worst in ls and all(severity(worst) >= severity(x) for x in ls)


@given(levels, st.booleans(), st.booleans())
def test_kubelet_health_rules(level: str, in_use: bool, grace: bool) -> None:
    health = kubelet_health(level, in_use=in_use, grace_tolerance=grace)
    if level in ("NormalNPU", "NotHandleFault", "SubHealthFault"):
        assert health == "Healthy"
    elif level == "PreSeparateNPU":
        assert health == ("Healthy" if in_use else "Unhealthy")
    elif level == "FreeRestartNPU":
        assert health == ("Healthy" if in_use and grace else "Unhealthy")
    else:
        assert health == "Unhealthy"
    assert network_health(level) == ("Healthy" if level in ("NormalNPU", "NotHandleFault") else "Unhealthy")


@st.composite
def selectors(draw: st.DrawFn) -> Selector:
    scope = draw(st.sampled_from(["node", "chips", "ring", "tor", "super_pod", "cluster"]))
    node = draw(st.sampled_from(NODES))
    info = INV.node(node)
    body: dict[str, object] = {}
    if scope == "node":
        body = {"node": node}
    elif scope == "chips":
        body = {"node": node, "chips": draw(st.lists(st.integers(0, len(info.chips) - 1), min_size=1, max_size=8))}
    elif scope == "ring":
        groups = info.profile.spec.topology.sio_pairs or info.profile.spec.topology.rings
        body = {"node": node, "ring": draw(st.integers(0, len(groups) - 1))}
    elif scope == "tor":
        body = {"tor": info.tor_id}
    elif scope == "super_pod":
        body = {"cluster": True}
    else:
        body = {"cluster": True}
    if draw(st.booleans()):
        body["random"] = draw(st.integers(1, 2))
        body["seed"] = draw(st.integers(0, 1000))
    return Selector.model_validate(body)


@settings(max_examples=200)
@given(selectors())
def test_selector_yields_distinct_existing_chips_deterministically(sel: Selector) -> None:
    if sel.random is not None:
        scope = resolve(sel.model_copy(update={"random": None, "seed": None}), INV)
        if sel.random > len(scope):
            with pytest.raises(ValueError, match="random chips but its scope has"):
                resolve(sel, INV)
            return
    keys = resolve(sel, INV)
    assert keys and len(keys) == len(set(keys))
    for node, phy in keys:
        INV.chip(node, phy)
    assert resolve(sel, INV) == keys
    if sel.random is not None:
        assert len(keys) == sel.random
        unsampled = resolve(sel.model_copy(update={"random": None, "seed": None}), INV)
        assert set(keys) <= set(unsampled)
    if sel.node is not None:
        assert {n for n, _ in keys} == {sel.node}
