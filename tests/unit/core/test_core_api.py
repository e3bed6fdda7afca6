from __future__ import annotations

import json
import threading

import pytest
from fastapi.testclient import TestClient

from emulator.api import create_app
from emulator.engine import Engine

NODE = "npu-node-0"


def test_inject_get_clear_over_rest(api: TestClient) -> None:
    r = api.post("/v1/faults", json={"selector": {"node": NODE, "chips": [3]}, "kind": "hbm-multi-bit-ecc"})
    assert r.status_code == 201, r.text
    fid = r.json()["id"]
    assert api.get(f"/v1/faults/{fid}").json()["state"] == "active"
    assert api.get(f"/v1/nodes/{NODE}/chips/3").json()["fault_codes"] == ["80E01801"]
    assert [f["id"] for f in api.get("/v1/faults", params={"state": "active"}).json()] == [fid]
    assert api.delete(f"/v1/faults/{fid}").json()["state"] == "cleared"
    assert api.get(f"/v1/nodes/{NODE}/chips/3").json()["fault_level"] == "NormalNPU"


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"selector": {"node": "nope"}, "kind": "aic-bus"}, 404, "unknown node 'nope'"),
    ({"selector": {"node": NODE, "chips": [42]}, "kind": "aic-bus"}, 404, "no chip 42"),
    ({"selector": {"node": NODE}, "kind": "melted"}, 404, "unknown fault kind 'melted'"),
    ({"selector": {"node": NODE}, "code": "XYZ"}, 422, "8 hex digits"),
    ({"selector": {"node": NODE}}, 422, "exactly one of 'kind' and 'code'"),
    ({"selector": {"node": NODE, "tor": 0}, "kind": "aic-bus"}, 422, "more than one scope"),
    ({"selector": {"node": NODE}, "kind": "aic-bus", "duration_s": -1}, 422, "duration_s"),
    ({"selector": {"node": NODE}, "kind": "aic-bus", "colour": "red"}, 422, "colour"),
])
def test_bad_injections_get_a_4xx_naming_the_problem_and_change_nothing(
        api: TestClient, engine: Engine, body: dict, status: int, message: str) -> None:  # type: ignore[type-arg]
    seq = engine.events.last_seq
    r = api.post("/v1/faults", json=body)
    assert r.status_code == status
    assert message in r.json()["detail"]
    assert engine.events.last_seq == seq and engine.faults == {}


def test_malformed_json_and_oversized_bodies(api: TestClient, engine: Engine) -> None:
    r = api.post("/v1/faults", content=b'{"selector": ', headers={"content-type": "application/json"})
    assert r.status_code == 422 and "malformed JSON" in r.json()["detail"]
    r = api.post("/v1/faults", content=b"x" * (5 * 1024 * 1024), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert engine.faults == {}


def test_unknown_fault_id_and_chip(api: TestClient) -> None:
    assert api.delete("/v1/faults/f-999").status_code == 404
    assert api.get(f"/v1/nodes/{NODE}/chips/8").status_code == 404


def test_token_protects_every_mutation(engine: Engine) -> None:
    with TestClient(create_app(engine, token="s3cret")) as client:
        body = {"selector": {"node": NODE, "chips": [0]}, "kind": "aic-bus"}
        assert client.post("/v1/faults", json=body).status_code == 401
        assert client.patch(f"/v1/nodes/{NODE}/chips/0/telemetry", json={"temperature_c": 50}).status_code == 401
        assert client.put("/v1/clock", json={"speed": 2}).status_code == 401
        assert client.post("/v1/scenarios/single-ecc").status_code == 401
        assert client.get("/v1/nodes").status_code == 200
        assert engine.faults == {}
        ok = client.post("/v1/faults", json=body, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 201


def test_telemetry_is_validated_and_applied(api: TestClient) -> None:
    r = api.patch(f"/v1/nodes/{NODE}/chips/1/telemetry", json={"temperature_c": 300})
    assert r.status_code == 422 and "temperature_c" in r.json()["detail"]
    r = api.patch(f"/v1/nodes/{NODE}/chips/1/telemetry",
                  json={"temperature_c": 61, "aicore_util_pct": 77,
                        "processes": [{"pid": 42, "name": "train.py", "memory_mb": 2048}]})
    chip = r.json()
    assert (chip["temperature_c"], chip["aicore_util_pct"], chip["processes"][0]["pid"]) == (61, 77, 42)


def test_scenario_replay_is_all_or_nothing(api: TestClient, engine: Engine) -> None:
    r = api.post("/v1/scenarios/ecc-escalation")
    assert r.status_code == 201 and len(r.json()["faults"]) == 2
    bad = {"apiVersion": "npu-emu.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "bad"},
           "spec": {"steps": [{"fault": {"selector": {"node": NODE}, "kind": "aic-bus"}},
                              {"fault": {"selector": {"node": "ghost"}, "kind": "aic-bus"}}]}}
    r = api.post("/v1/scenarios", content=json.dumps(bad), headers={"content-type": "application/json"})
    assert r.status_code == 404 and "ghost" in r.json()["detail"]
    assert len(engine.faults) == 2
    r = api.post("/v1/scenarios", content=b"apiVersion: npu-emu.io/v1alpha1\nkind: Scenario\nmetadata: {name: y}\n"
                 b"spec: {steps: [{fault: {selector: {node: npu-node-0, chips: [7]}, kind: link-down}}]}\n",
                 headers={"content-type": "application/yaml"})
    assert r.status_code == 201
    assert api.get(f"/v1/nodes/{NODE}/chips/7").json()["link_up"] is False
    assert api.post("/v1/scenarios/no-such").status_code == 404


def test_clock_speed_and_advance(api: TestClient) -> None:
    t0 = api.get("/v1/clock").json()["now_ms"]
    r = api.put("/v1/clock", json={"advance_s": 3600})
    assert r.json()["now_ms"] >= t0 + 3_600_000
    assert api.put("/v1/clock", json={"speed": 0}).status_code == 422
    assert api.put("/v1/clock", json={"speed": 3600}).json()["speed"] == 3600


def test_event_stream_resumes_after_a_sequence_number(api: TestClient, engine: Engine) -> None:
    api.post("/v1/faults", json={"selector": {"node": NODE, "chips": [3]}, "kind": "aic-bus"})
    first_seq = engine.events.last_seq
    api.post("/v1/faults", json={"selector": {"node": NODE, "chips": [4]}, "kind": "aic-bus"})
    got: list[dict] = []  # type: ignore[type-arg]

    def read() -> None:
        with api.stream("GET", "/v1/events", params={"since": first_seq}) as r:
            for line in r.iter_lines():
                if line.startswith("data: "):
                    got.append(json.loads(line[6:]))
                    if len(got) == 2:
                        return

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    assert [e["seq"] for e in got] == [first_seq + 1, first_seq + 2]
    assert {e["type"] for e in got} == {"chip.changed", "fault.injected"}
    assert api.get("/v1/events", params={"node": "ghost"}).status_code == 404


def test_openapi_is_served(api: TestClient) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    assert "/v1/faults" in paths and "/v1/events" in paths
