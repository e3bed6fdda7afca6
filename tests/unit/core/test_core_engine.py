from __future__ import annotations

import json
from pathlib import Path

import pytest

from emulator.engine import Engine, FaultRequest
from emulator.profiles import load_cluster_spec
from emulator.selector import Selector
from emulator.service import EmulatorOptions, StateMismatch, open_engine

NODE = "npu-node-0"


def req(kind: str, chips: list[int] | None = None, **kw: object) -> FaultRequest:
    sel = {"node": NODE} | ({"chips": chips} if chips is not None else {})
    return FaultRequest.model_validate({"selector": sel, "kind": kind, **kw})


def advance(engine: Engine, seconds: float) -> None:
    engine.set_clock(advance_s=seconds)


def test_multi_bit_ecc_sets_level_codes_health_and_counters(engine: Engine) -> None:
    fault = engine.inject(req("hbm-multi-bit-ecc", [3]))
    chip = engine.chip(NODE, 3)
    assert fault.state == "active"
    assert chip["fault_level"] == "RestartBusiness"
    assert chip["fault_codes"] == ["80E01801"]
    assert chip["npu_smi_health"] == "Warning"
    assert chip["ecc"]["hbm_double_bit"] == 1
    assert engine.chip(NODE, 2)["fault_level"] == "NormalNPU"
    engine.clear_fault(fault.id)
    chip = engine.chip(NODE, 3)
    assert (chip["fault_level"], chip["fault_codes"], chip["npu_smi_health"]) == ("NormalNPU", [], "OK")
    assert chip["ecc"]["hbm_double_bit_total"] == 1  # counters survive the fault


def test_link_down_escalates_after_20s_and_recovers_60s_after_the_link_returns(engine: Engine) -> None:
    fault = engine.inject(req("link-down", [2]))
    chip = engine.chip(NODE, 2)
    assert (chip["fault_level"], chip["link_up"], chip["network_healthy"]) == ("NotHandleFault", False, True)
    advance(engine, 19)
    assert engine.chip(NODE, 2)["fault_level"] == "NotHandleFault"
    advance(engine, 2)
    chip = engine.chip(NODE, 2)
    assert (chip["fault_level"], chip["network_healthy"]) == ("PreSeparateNPU", False)
    engine.clear_fault(fault.id)
    chip = engine.chip(NODE, 2)
    assert chip["link_up"] is True and chip["fault_level"] == "PreSeparateNPU"
    assert chip["faults"][0]["state"] == "recovering"
    advance(engine, 61)
    chip = engine.chip(NODE, 2)
    assert (chip["fault_level"], chip["faults"]) == ("NormalNPU", [])


def test_two_multi_bit_ecc_within_24h_separate_the_chip_until_an_operator_clears_it(engine: Engine) -> None:
    first = engine.inject(req("hbm-multi-bit-ecc", [1], duration_s=30))
    advance(engine, 31)
    assert engine.fault(first.id).state == "expired"
    assert engine.chip(NODE, 1)["fault_level"] == "NormalNPU"
    advance(engine, 6 * 3600)
    engine.inject(req("hbm-multi-bit-ecc", [1], duration_s=30))
    advance(engine, 31)
    chip = engine.chip(NODE, 1)
    assert chip["manually_separated"] and chip["fault_level"] == "ManuallySeparateNPU"
    advance(engine, 3 * 86400)
    assert engine.chip(NODE, 1)["fault_level"] == "ManuallySeparateNPU"
    engine.clear_separation(NODE, 1)
    assert engine.chip(NODE, 1)["fault_level"] == "NormalNPU"


def test_ecc_faults_more_than_24h_apart_do_not_separate(engine: Engine) -> None:
    engine.inject(req("hbm-multi-bit-ecc", [1], duration_s=30))
    advance(engine, 25 * 3600)
    engine.inject(req("hbm-multi-bit-ecc", [1], duration_s=30))
    advance(engine, 31)
    assert engine.chip(NODE, 1)["manually_separated"] is False


def test_card_lost_hides_the_chip_and_recovery_restores_it(engine: Engine) -> None:
    fault = engine.inject(req("card-lost", [5]))
    chip = engine.chip(NODE, 5)
    assert (chip["present"], chip["fault_level"], chip["fault_codes"]) == (False, "RestartNPU", ["40F84E00"])
    engine.clear_fault(fault.id)
    assert engine.chip(NODE, 5)["present"] is True


def test_single_bit_ecc_only_counts(engine: Engine) -> None:
    fault = engine.inject(req("hbm-single-bit-ecc", [0], repeat={"count": 3, "interval_s": 1}))
    advance(engine, 5)
    chip = engine.chip(NODE, 0)
    assert chip["ecc"]["hbm_single_bit"] == 3 and chip["fault_level"] == "NormalNPU" and chip["faults"] == []
    assert engine.fault(fault.id).state == "completed"


def test_over_temperature_raises_temperature_while_active(engine: Engine) -> None:
    fault = engine.inject(req("over-temperature", [4]))
    assert engine.chip(NODE, 4)["temperature_c"] == 105
    engine.clear_fault(fault.id)
    assert engine.chip(NODE, 4)["temperature_c"] == 45


def test_node_fault_lands_on_every_chip(engine: Engine) -> None:
    engine.inject(req("node-fault", [0]))
    assert {c["fault_level"] for c in engine.node_chips(NODE)} == {"SeparateNPU"}


def test_delayed_start_and_duration(engine: Engine) -> None:
    fault = engine.inject(req("aic-bus", [6], start_after_s=10, duration_s=5))
    assert fault.state == "scheduled" and engine.chip(NODE, 6)["fault_level"] == "NormalNPU"
    advance(engine, 10)
    assert engine.chip(NODE, 6)["fault_level"] == "RestartRequest"
    advance(engine, 5)
    assert engine.chip(NODE, 6)["fault_level"] == "NormalNPU"
    assert engine.fault(fault.id).state == "expired"


def test_bad_requests_change_nothing(engine: Engine) -> None:
    before = (engine.events.last_seq, len(engine.faults))
    good = req("aic-bus", [1])
    bad = FaultRequest.model_validate({"selector": {"node": NODE, "chips": [8]}, "kind": "aic-bus"})
    with pytest.raises(LookupError, match="no chip 8"):
        engine.inject_many([good, bad])
    with pytest.raises(LookupError, match="unknown fault kind"):
        engine.inject(req("no-such-fault"))
    with pytest.raises(LookupError, match="not in the catalogue"):
        engine.inject(FaultRequest.model_validate({"selector": {"node": NODE}, "code": "12345678"}))
    with pytest.raises(ValueError, match="unknown telemetry"):
        engine.set_telemetry(NODE, 0, {"temperature": 3})
    assert (engine.events.last_seq, len(engine.faults)) == before
    assert engine.chip(NODE, 1)["fault_level"] == "NormalNPU"


def test_custom_code_needs_a_level(engine: Engine) -> None:
    fault = engine.inject(FaultRequest.model_validate(
        {"selector": {"node": NODE, "chips": [0]}, "code": "0x8c1234ab", "level": "SeparateNPU"}))
    assert fault.entry.code == "8C1234AB"
    assert engine.chip(NODE, 0)["fault_level"] == "SeparateNPU"


def test_events_are_monotonic_and_describe_chip_changes(engine: Engine) -> None:
    start = engine.events.last_seq
    fault = engine.inject(req("hbm-multi-bit-ecc", [3]))
    engine.clear_fault(fault.id)
    events = [json.loads(body) for _, body in engine.events.after(start)]
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(start + 1, start + 1 + len(events)))
    changed = [e for e in events if e["type"] == "chip.changed"]
    assert [(e["phy_id"], e["data"]["fault_level"]) for e in changed] == [(3, "RestartBusiness"), (3, "NormalNPU")]
    assert [e["type"] for e in events].count("fault.cleared") == 1


def test_restart_restores_exactly_the_acknowledged_state(state_path: Path, engine: Engine) -> None:
    ecc = engine.inject(req("hbm-multi-bit-ecc", [3]))
    engine.inject(req("link-down", [2], duration_s=100))
    engine.set_telemetry(NODE, 0, {"temperature_c": 70, "processes": [{"pid": 1, "name": "p", "memory_mb": 5}]})
    before = engine.node_chips(NODE)
    last_seq = engine.events.last_seq
    engine.store.close()  # as after kill -9: nothing is flushed on the way out
    again = open_engine(EmulatorOptions(state_path=state_path))
    after = again.node_chips(NODE)
    assert after == before
    assert again.events.last_seq == last_seq
    assert again.fault(ecc.id).state == "active"
    again.set_clock(advance_s=101)
    assert again.chip(NODE, 2)["link_up"] is True
    again.store.close()


def test_a_state_file_refuses_another_cluster(state_path: Path, engine: Engine) -> None:
    engine.store.close()
    with pytest.raises(StateMismatch, match="--reset"):
        open_engine(EmulatorOptions(state_path=state_path, cluster=load_cluster_spec("mixed-small")))
    reset = open_engine(EmulatorOptions(state_path=state_path, cluster=load_cluster_spec("mixed-small"), reset=True))
    assert len(reset.inventory.nodes) == 10
    reset.store.close()


def test_selector_scopes(mixed_engine: Engine) -> None:
    inv = mixed_engine.inventory
    from emulator.selector import resolve

    assert len(resolve(Selector(tor=0), inv)) == 16
    assert len(resolve(Selector(super_pod=0), inv)) == 64
    assert resolve(Selector(node="a3-node-0", ring=1), inv) == [("a3-node-0", 2), ("a3-node-0", 3)]
    assert resolve(Selector(node="910a-node-1", ring=1), inv) == [("910a-node-1", p) for p in (4, 5, 6, 7)]
    assert len(resolve(Selector(cluster=True), inv)) == inv.chip_count
    with pytest.raises(LookupError, match="no ring 2"):
        resolve(Selector(node="910a-node-0", ring=2), inv)
    with pytest.raises(LookupError, match="ToR 99"):
        resolve(Selector(tor=99), inv)
