"""The emulator as a separate process: every fault kind over REST, seen the same way by npu-smi, devfs,
the namespace NICs, /metrics and the event stream, before and after a kill -9 restart."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from emulator.testing import EmulatorProcess

NODE = "npu-node-0"
NETNS_OK = os.geteuid() == 0 and Path("/var/run/netns").parent.exists()


@pytest.fixture
def emu(tmp_path: Path) -> Iterator[EmulatorProcess]:
    args = ["--devfs-root", str(tmp_path / "devfs")]
    if NETNS_OK:
        args.append("--netns")
    with EmulatorProcess(tmp_path / "state.db", args=args) as proc:
        yield proc


def npu_smi(emu: EmulatorProcess, *args: str) -> str:
    out = subprocess.run(["npu-smi", *args], env=emu.env | {"NPU_EMU_NODE": NODE}, capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout


def hccn(emu: EmulatorProcess, *args: str) -> str:
    out = subprocess.run(["hccn_tool", *args], env=emu.env | {"NPU_EMU_NODE": NODE}, capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout


def metric(emu: EmulatorProcess, name: str, chip: int) -> float:
    for line in emu.client.metrics().splitlines():
        if line.startswith(name + "{") and f'id="{chip}"' in line:
            return float(line.split()[1])
    raise AssertionError(f"no {name} for chip {chip}")


class EventRecorder:
    def __init__(self, emu: EmulatorProcess) -> None:
        self.events: list[dict[str, Any]] = []
        self._emu = emu
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for event in self._emu.client.events(since=0, timeout=60):
                self.events.append(event)
        except Exception:  # the service was killed under us
            return


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(0.05)


def health_line(emu: EmulatorProcess, chip: int) -> str:
    return npu_smi(emu, "info", "-t", "health", "-i", str(chip))


def test_every_fault_kind_is_seen_alike_by_every_observer(emu: EmulatorProcess, tmp_path: Path) -> None:
    devfs = tmp_path / "devfs"
    assert "OK" in health_line(emu, 3)
    recorder = EventRecorder(emu)

    ecc = emu.client.inject({"node": NODE, "chips": [3]}, kind="hbm-multi-bit-ecc")
    health = health_line(emu, 3)
    assert "Warning" in health and "80E01801" in health
    assert "Warning" in npu_smi(emu, "info")
    assert metric(emu, "npu_chip_info_health_status", 3) == 0
    assert metric(emu, "npu_chip_info_hbm_ecc_double_bit_error_cnt", 3) >= 1

    lost = emu.client.inject({"node": NODE, "chips": [5]}, kind="card-lost")
    emu.client.wait_for_chip(NODE, 5, lambda c: not c["present"])
    wait_until(lambda: not (devfs / "dev/davinci5").exists())
    assert (devfs / "dev/davinci4").exists()
    table = npu_smi(emu, "info")
    assert "| 5 " not in table and "| 4 " in table

    link = emu.client.inject({"node": NODE, "chips": [2]}, kind="link-down")
    wait_until(lambda: "DOWN" in hccn(emu, "-i", "2", "-link", "-g"))
    assert "UP" in hccn(emu, "-i", "1", "-link", "-g")
    assert metric(emu, "npu_chip_info_link_status", 2) == 0

    hot = emu.client.inject({"node": NODE, "chips": [6]}, kind="over-temperature")
    assert metric(emu, "npu_chip_info_temperature", 6) == 105

    bus = emu.client.inject({"node": NODE, "chips": [7]}, kind="aic-bus")
    assert "80C98009" in health_line(emu, 7)

    for fault in (ecc, lost, link, hot, bus):
        emu.client.clear(fault["id"])
    emu.client.wait_for_chip(NODE, 5, lambda c: c["present"])
    wait_until(lambda: (devfs / "dev/davinci5").exists())
    assert stat.S_ISCHR((devfs / "dev/davinci5").stat().st_mode) or (devfs / "dev/davinci5").is_file()
    wait_until(lambda: "UP" in hccn(emu, "-i", "2", "-link", "-g"))
    assert "OK" in health_line(emu, 3) and "OK" in health_line(emu, 7)
    assert metric(emu, "npu_chip_info_temperature", 6) == 45

    emu.client.wait_for_chip(NODE, 7, lambda c: c["fault_level"] == "NormalNPU")
    changed = [e for e in recorder.events if e["type"] == "chip.changed"]
    assert {e["phy_id"] for e in changed} >= {2, 3, 5, 6, 7}
    seqs = [e["seq"] for e in recorder.events]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))


def test_kill9_restart_keeps_acknowledged_faults(emu: EmulatorProcess, tmp_path: Path) -> None:
    fault = emu.client.inject({"node": NODE, "chips": [3]}, kind="hbm-multi-bit-ecc")
    lost = emu.client.inject({"node": NODE, "chips": [1]}, kind="card-lost")
    before = emu.client.chips(NODE)
    seq = emu.client.health()["last_seq"]
    emu.kill9()
    emu.start()
    assert emu.client.chips(NODE) == before
    assert emu.client.health()["last_seq"] == seq
    assert "80E01801" in health_line(emu, 3)
    wait_until(lambda: not (tmp_path / "devfs/dev/davinci1").exists())
    resumed = next(emu.client.events(since=seq - 1, timeout=10))
    assert resumed["seq"] == seq
    emu.client.clear(fault["id"])
    emu.client.clear(lost["id"])
    assert "OK" in health_line(emu, 3)
    wait_until(lambda: (tmp_path / "devfs/dev/davinci1").exists())


def test_token_is_required_by_the_process_when_configured(tmp_path: Path) -> None:
    with EmulatorProcess(tmp_path / "s.db", token="t0k") as emu:
        from emulator.client import EmulatorClient, EmulatorError

        with EmulatorClient(emu.url) as anonymous, pytest.raises(EmulatorError) as info:
            anonymous.inject({"node": NODE}, kind="aic-bus")
        assert info.value.status == 401
        assert emu.client.inject({"node": NODE, "chips": [0]}, kind="aic-bus")["state"] == "active"


def test_cli_inject_and_status(emu: EmulatorProcess) -> None:
    out = subprocess.run(["npu-emu", "inject", "--url", emu.url, "--node", NODE, "--chip", "4", "--kind", "aiv-bus"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["code"] == "80CB8009"
    bad = subprocess.run(["npu-emu", "inject", "--url", emu.url, "--node", "ghost", "--kind", "aiv-bus"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1 and "unknown node 'ghost'" in bad.stderr
