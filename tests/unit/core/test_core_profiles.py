from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from emulator.catalogue import load_catalogue
from emulator.inventory import Inventory
from emulator.profiles import ClusterSpec, Profile, fixtures_dir, load_cluster_spec, load_profile, profile_names
from emulator.scenario import load_scenario, scenario_names


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_loads_and_is_consistent(name: str) -> None:
    spec = load_profile(name).spec
    assert len(spec.chips) == spec.chip_count
    assert len({c.bus_id for c in spec.chips}) == spec.chip_count


def test_shipped_profiles_are_the_three_products() -> None:
    gens = {load_profile(n).spec.generation: load_profile(n).spec for n in profile_names()}
    assert gens["910A"].topology.rings == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert gens["910B"].topology.kind == "full-mesh" and gens["910B"].chip_count == 8
    assert gens["A3"].chip_count == 16 and len(gens["A3"].topology.sio_pairs) == 8


@pytest.mark.parametrize("path", sorted((fixtures_dir() / "clusters").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_cluster_spec_builds_an_inventory(path) -> None:  # type: ignore[no-untyped-def]
    inv = Inventory(load_cluster_spec(path))
    assert inv.chip_count == sum(len(n.chips) for n in inv.nodes.values()) > 0


@pytest.mark.parametrize("name", scenario_names())
def test_every_scenario_parses_and_resolves(name: str) -> None:
    scenario = load_scenario(name)
    assert scenario.requests()


def test_catalogue_has_the_required_faults() -> None:
    cat = load_catalogue()
    assert cat.by_code["80E01801"].frequency is not None
    assert cat.by_code["80E01801"].frequency.level == "ManuallySeparateNPU"
    link = cat.by_code["81078603"]
    assert (link.level, link.timeout.level, link.timeout.after_s, link.recover_after_s) == (  # type: ignore[union-attr]
        "NotHandleFault", "PreSeparateNPU", 20, 60)
    assert cat.by_code["40F84E00"].effects.present is False
    assert cat.by_kind["hbm-single-bit-ecc"].counter_only
    assert cat.by_kind["over-temperature"].npu_emu_code


def test_profile_with_a_typo_is_refused() -> None:
    raw = yaml.safe_load((fixtures_dir() / "profiles" / "atlas-800t-a2.yaml").read_text())
    raw["spec"]["chip_cuont"] = 8
    with pytest.raises(ValidationError, match="chip_cuont"):
        Profile.model_validate(raw)


def test_profile_rings_must_cover_every_chip() -> None:
    raw = yaml.safe_load((fixtures_dir() / "profiles" / "atlas-800-9000.yaml").read_text())
    raw["spec"]["topology"]["rings"] = [[0, 1, 2, 3], [4, 5, 6]]
    with pytest.raises(ValidationError, match="every chip exactly once"):
        Profile.model_validate(raw)


def test_duplicate_node_names_are_refused() -> None:
    spec = ClusterSpec.model_validate({
        "apiVersion": "npu-emu.io/v1alpha1", "kind": "ClusterSpec", "metadata": {"name": "dup"},
        "spec": {"node_groups": [{"profile": "atlas-800t-a2", "count": 1, "name_pattern": "n"},
                                 {"profile": "atlas-800-9000", "count": 1, "name_pattern": "n"}]}})
    with pytest.raises(ValueError, match="appears twice"):
        Inventory(spec)


def test_inventory_addresses_tor_superpod_and_ips() -> None:
    inv = Inventory(load_cluster_spec("mixed-small"))
    nodes = list(inv.nodes.values())
    assert [n.tor_id for n in nodes[:4]] == [0, 0, 1, 1]
    a3 = [n for n in nodes if n.profile.spec.generation == "A3"]
    assert {n.super_pod_id for n in a3} == {0} and [n.server_index for n in a3] == [0, 1, 2, 3]
    assert nodes[0].super_pod_id == -2
    ips = [c.device_ip for n in nodes for c in n.chips]
    assert len(set(ips)) == len(ips)
    sdids = [c.super_device_id for n in a3 for c in n.chips]
    assert len(set(sdids)) == len(sdids) and None not in sdids
    assert inv.chip("a3-node-0", 5).card_id == 2 and inv.chip("a3-node-0", 5).chip_index == 1
