"""The observers against the chip dicts the real engine produces for every shipped profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator import devfs, hccn_tool
from emulator.metrics import render_metrics
from emulator.npu_smi import cli

PROFILES = ["atlas-800-9000", "atlas-800t-a2", "atlas-900-a3-superpod"]
COMMANDS = [["info"], ["info", "-l"], ["info", "-m"], ["info", "-t", "topo"]] + [
    ["info", "-t", t, "-i", "0"] for t in ("board", "health", "ecc", "temp", "usages", "memory", "common")]


@pytest.fixture(params=PROFILES)
def engine_state(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[dict, list[dict]]:
    from emulator.profiles import simple_cluster_spec
    from emulator.service import EmulatorOptions, open_engine

    engine = open_engine(EmulatorOptions(state_path=tmp_path / "s.db",
                                         cluster=simple_cluster_spec(request.param, 1)))
    name = next(iter(engine.inventory.nodes))
    return engine.inventory.node(name).summary(), engine.node_chips(name)


def test_every_command_renders(engine_state: tuple[dict, list[dict]]) -> None:
    node, chips = engine_state
    for args in COMMANDS:
        assert cli.run(args, (node, chips)).endswith("\n"), args
    for line in cli.run(["info"], (node, chips)).splitlines():
        assert len(line) == 98, line
    assert len(cli.run(["info", "-t", "topo"], (node, chips)).splitlines()) == len(chips) + 1 + 1 + 7 + (
        1 if node["topology"]["kind"] == "superpod" else 0)


def test_metrics_devfs_hccn(engine_state: tuple[dict, list[dict]], tmp_path: Path) -> None:
    node, chips = engine_state
    assert f'machine_npu_nums{{node="{node["name"]}"}} {float(len(chips))}' in render_metrics([(node, chips)])
    res = devfs.materialise(node, chips, tmp_path / "root")
    assert res.davinci == tuple(c["phy_id"] for c in chips)
    no_netns = dict(node, name="no-netns")
    assert hccn_tool.run(["-i", "0", "-link", "-g"], (no_netns, chips)) == "link status: UP\n"


def test_npu_smi_against_the_real_api_over_a_unix_socket(tmp_path: Path) -> None:
    import threading
    import time

    import uvicorn

    from emulator.api import create_app
    from emulator.npu_smi import source
    from emulator.profiles import simple_cluster_spec
    from emulator.service import EmulatorOptions, open_engine

    engine = open_engine(EmulatorOptions(state_path=tmp_path / "s.db", cluster=simple_cluster_spec("atlas-800t-a2", 2)))
    sock = tmp_path / "api.sock"
    server = uvicorn.Server(uvicorn.Config(create_app(engine), uds=str(sock), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started
        second = list(engine.inventory.nodes)[1]
        node, chips = source.load_state({"NPU_EMU_URL": f"unix://{sock}", "NPU_EMU_NODE": second})
        assert node["name"] == second and len(chips) == 8
        first, _ = source.load_state({"NPU_EMU_URL": f"unix://{sock}"})
        assert first["name"] == next(iter(engine.inventory.nodes))
        assert cli.run(["info", "-t", "health", "-i", "0"], (node, chips)).startswith("\tHealth Status")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
