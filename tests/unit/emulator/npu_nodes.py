"""Builders of realistic node / chip dicts in the shape docs/architecture.md fixes (test helper).

Importable from tests in this directory as `from npu_nodes import ...` (pytest puts the directory on
sys.path because it has no __init__.py).
"""

from __future__ import annotations

import copy
from typing import Any

Node = dict[str, Any]
Chip = dict[str, Any]

_910B_BUS = ["0000:C1:00.0", "0000:01:00.0", "0000:C2:00.0", "0000:02:00.0",
             "0000:81:00.0", "0000:41:00.0", "0000:82:00.0", "0000:42:00.0"]
_910B_AFFINITY = ["144-167", "0-23", "144-167", "0-23", "96-119", "48-71", "96-119", "48-71"]
_910A_BUS = ["0000:C1:00.0", "0000:C2:00.0", "0000:81:00.0", "0000:82:00.0",
             "0000:01:00.0", "0000:02:00.0", "0000:41:00.0", "0000:42:00.0"]
_910A_AFFINITY = ["0-23", "0-23", "24-47", "24-47", "48-71", "48-71", "72-95", "72-95"]


def _ecc() -> dict[str, int]:
    return {"ddr_single_bit": 0, "ddr_double_bit": 0, "hbm_single_bit": 0, "hbm_double_bit": 0,
            "hbm_single_bit_total": 0, "hbm_double_bit_total": 0,
            "hbm_single_bit_isolated_pages": 0, "hbm_double_bit_isolated_pages": 0}


def _chip(node: str, phy: int, *, name: str, bus: str, affinity: str, ring: int, hbm_mb: int,
          ddr_mb: int, ai_cores: int, card: int, chip_index: int, subnet: int) -> Chip:
    return {
        "node": node, "phy_id": phy, "logic_id": phy, "card_id": card, "chip_index": chip_index,
        "name": name, "bus_id": bus, "numa_node": int(affinity.split("-")[0]) // 48,
        "cpu_affinity": affinity, "ring": ring, "ai_core_count": ai_cores,
        "hbm_total_mb": hbm_mb, "hbm_used_mb": 3276, "ddr_total_mb": ddr_mb,
        "ddr_used_mb": 920 if ddr_mb else 0, "hugepages_total": 0, "hugepages_used": 0,
        "temperature_c": 45 + phy % 3, "hbm_temperature_c": 38, "power_w": 95.3 + phy,
        "voltage_v": 0.85, "aicore_util_pct": 0, "aivector_util_pct": 0, "aicpu_util_pct": 0,
        "ctrlcpu_util_pct": 0, "hbm_bw_util_pct": 0, "aicore_freq_mhz": 1800,
        "aicore_cur_freq_mhz": 800, "ecc": _ecc(),
        "device_ip": f"10.{subnet}.0.{phy + 1}", "netmask": "255.255.0.0", "super_device_id": None,
        "vdie_id": f"185011D4-21104518-A0C4ED94-14CC040A-5610200{phy % 10}",
        "serial_number": f"SN{node[-1:]}{phy:04d}",
        "present": True, "link_up": True, "fault_level": "NormalNPU", "fault_codes": [],
        "npu_smi_health": "OK", "network_healthy": True, "manually_separated": False,
        "faults": [], "processes": [],
    }


def node_910b(name: str = "npu-node-0", index: int = 0) -> tuple[Node, list[Chip]]:
    node: Node = {
        "name": name, "index": index, "profile": "atlas-800t-a2", "product": "Atlas 800T A2",
        "generation": "910B", "chip_name": "910B3", "chip_count": 8, "tor_id": 0, "super_pod_id": -2,
        "server_index": -2, "host_ip": f"172.16.0.{index + 1}",
        "versions": {"npu_smi": "24.1.rc2", "driver": "24.1.rc2", "firmware": "7.5.0.1.129"},
        "board": {"board_id": "0x60", "pcb_id": "A", "bom_id": "1", "pci_vendor_id": "0x19E5",
                  "pci_device_id": "0xD802", "subsystem_vendor_id": "0x19E5",
                  "subsystem_device_id": "0x3003"},
        "topology": {"kind": "full-mesh", "rings": [list(range(8))], "sio_pairs": []},
        "labels": {"accelerator-type": "module-910b-8"},
    }
    chips = [_chip(name, p, name="910B3", bus=_910B_BUS[p], affinity=_910B_AFFINITY[p], ring=0,
                   hbm_mb=65536, ddr_mb=0, ai_cores=20, card=p, chip_index=0, subnet=64 + index)
             for p in range(8)]
    return node, chips


def node_910a(name: str = "npu-node-a", index: int = 0) -> tuple[Node, list[Chip]]:
    node: Node = {
        "name": name, "index": index, "profile": "atlas-800-9000", "product": "Atlas 800 9000",
        "generation": "910A", "chip_name": "910ProB", "chip_count": 8, "tor_id": 0, "super_pod_id": -2,
        "server_index": -2, "host_ip": f"172.16.1.{index + 1}",
        "versions": {"npu_smi": "23.0.5", "driver": "23.0.5", "firmware": "7.1.0.7.220"},
        "board": {"board_id": "0x02", "pcb_id": "A", "bom_id": "1", "pci_vendor_id": "0x19e5",
                  "pci_device_id": "0xD801", "subsystem_vendor_id": "0x0200",
                  "subsystem_device_id": "0x0100"},
        "topology": {"kind": "rings", "rings": [[0, 1, 2, 3], [4, 5, 6, 7]], "sio_pairs": []},
        "labels": {"accelerator-type": "module"},
    }
    chips = [_chip(name, p, name="910ProB", bus=_910A_BUS[p], affinity=_910A_AFFINITY[p], ring=p // 4,
                   hbm_mb=32768, ddr_mb=15137, ai_cores=32, card=p, chip_index=0, subnet=96 + index)
             for p in range(8)]
    for c in chips:
        c["numa_node"] = 0 if c["phy_id"] < 4 else 1
    return node, chips


def node_a3(name: str = "npu-node-s", index: int = 0) -> tuple[Node, list[Chip]]:
    node: Node = {
        "name": name, "index": index, "profile": "atlas-900-a3-superpod", "product": "Atlas 900 A3 SuperPoD",
        "generation": "A3", "chip_name": "Ascend910", "chip_count": 16, "tor_id": 0, "super_pod_id": 0,
        "server_index": index, "host_ip": f"172.16.2.{index + 1}",
        "versions": {"npu_smi": "24.1.rc3", "driver": "24.1.rc3", "firmware": "7.5.0.3.220"},
        "board": {"board_id": "0xb0", "pcb_id": "A", "bom_id": "1", "pci_vendor_id": "0x19E5",
                  "pci_device_id": "0xD803", "subsystem_vendor_id": "0x19E5",
                  "subsystem_device_id": "0x3005"},
        "topology": {"kind": "superpod", "rings": [list(range(16))],
                     "sio_pairs": [[i, i + 1] for i in range(0, 16, 2)]},
        "labels": {"accelerator-type": "module-a3-16-super-pod"},
    }
    chips = []
    for p in range(16):
        bus = f"0000:{(0x9D + p * 8) % 0x100:02X}:00.0"
        aff = f"{(p // 4) * 40}-{(p // 4) * 40 + 39}"
        c = _chip(name, p, name="Ascend910", bus=bus, affinity=aff, ring=p // 2, hbm_mb=65536, ddr_mb=0,
                  ai_cores=24, card=p // 2, chip_index=p % 2, subnet=128 + index)
        c["super_device_id"] = index * 16 + p
        chips.append(c)
    return node, chips


def capture_910b() -> tuple[Node, list[Chip]]:
    """The two chips of the verbatim 910B capture in reference §4.1."""
    node, chips = node_910b()
    node["versions"] = {"npu_smi": "25.0.rc1.2", "driver": "25.0.rc1.2", "firmware": "7.7.0.1.231"}
    node["chip_name"] = "910B2C"
    rows = [(118.6, 47, "0000:6B:02.0", 6, 35738,
             [{"pid": 6513, "name": "rayWorkerDict", "memory_mb": 617},
              {"pid": 33776, "name": "VLLMWorker_TP", "memory_mb": 31747}]),
            (143.2, 49, "0000:65:02.0", 11, 35761,
             [{"pid": 33777, "name": "VLLMWorker_TP", "memory_mb": 31747}])]
    out = []
    for chip, (power, temp, bus, aicore, hbm_used, procs) in zip(chips, rows, strict=False):
        chip.update(name="910B2C", power_w=power, temperature_c=temp, bus_id=bus, aicore_util_pct=aicore,
                    hbm_used_mb=hbm_used, processes=procs)
        out.append(chip)
    node["chip_count"] = 2
    return node, out


def faulty(chip: Chip, code: str = "80E01801", level: str = "RestartBusiness",
           health: str = "Warning") -> Chip:
    c = copy.deepcopy(chip)
    c.update(fault_level=level, fault_codes=[code], npu_smi_health=health,
             faults=[{"id": "f-1", "code": code, "level": level, "fault_type": "CardUnhealthy",
                      "since_ms": 1744168468259}])
    return c
