"""cluster/faults_helper.py's pure parts: renaming a library scenario's nodes, reading a pod's chips."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import yaml

from cluster.faults_helper import _rename_nodes, pod_chips
from emulator.profiles import fixtures_dir
from emulator.scenario import parse_scenario


def test_rename_nodes_in_a_library_scenario_keeps_it_valid() -> None:
    body = yaml.safe_load((fixtures_dir() / "scenarios" / "ecc-escalation.yaml").read_text())
    renamed = _rename_nodes(body, {"npu-node-0": "ft-3"})
    scenario = parse_scenario(renamed)
    assert [r.selector.node for r in scenario.requests()] == ["ft-3", "ft-3"]
    assert body["spec"]["steps"][0]["fault"]["selector"]["node"] == "npu-node-0"  # the original is untouched
    assert _rename_nodes({"node": "other", "x": [{"node": "npu-node-0"}]}, {"npu-node-0": "a"}) == {
        "node": "other", "x": [{"node": "a"}]}


def v1pod(annotations: dict[str, str] | None, node: str | None = "n1") -> Any:
    return SimpleNamespace(metadata=SimpleNamespace(annotations=annotations, name="p"),
                           spec=SimpleNamespace(node_name=node))


def test_pod_chips_from_the_configuration_annotation() -> None:
    conf = json.dumps({"devices": [{"device_id": "5"}, {"device_id": "2"}]})
    assert pod_chips(v1pod({"ascend.kubectl.kubernetes.io/ascend-910-configuration": conf})) == ("n1", (2, 5))
    assert pod_chips(v1pod({})) is None
    assert pod_chips(v1pod(None)) is None
    assert pod_chips(v1pod({"ascend.kubectl.kubernetes.io/ascend-910-configuration": conf}, node=None)) is None
