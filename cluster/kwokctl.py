"""kwokctl's binary runtime: etcd, kube-apiserver, kube-controller-manager and kwok-controller.

kwokctl generates the PKI and kubeconfig, picks free ports and supervises the four processes; npu-emu
gives it the locally built binaries, 127.0.0.1, and its own Stages (which replace all of kwokctl's
defaults, node Stages included). kube-scheduler is disabled: Volcano schedules.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from .binaries import K8S_VERSION, Binaries

__all__ = ["PORT_OPTIONS", "KwokctlError", "kwokctl_config", "kwokctl_env", "render_kwokctl_config", "run_kwokctl"]


class KwokctlError(RuntimeError):
    """kwokctl failed; the message carries its output."""


PORT_OPTIONS = ("kubeApiserverPort", "etcdPort", "etcdPeerPort", "kubeControllerManagerPort",
                "kwokControllerPort")


def kwokctl_config(binaries: Binaries, stages: list[dict[str, Any]],
                   ports: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """The documents of kwokctl's --config file: one KwokctlConfiguration, then the Stages.

    `ports` (keys from PORT_OPTIONS) pins the listeners; kwokctl's own choice counts down from 32766
    and races when two clusters are created at the same moment.
    """
    options: dict[str, Any] = {
        "runtime": "binary",
        "bindAddress": "127.0.0.1",
        "kubeVersion": K8S_VERSION,
        "etcdBinary": str(binaries.path("etcd")),
        "kubeApiserverBinary": str(binaries.path("kube-apiserver")),
        "kubeControllerManagerBinary": str(binaries.path("kube-controller-manager")),
        "kwokControllerBinary": str(binaries.path("kwok")),
        "disable": ["kube-scheduler"],
        # Large kwok fleets: no client-side throttling between the components.
        "disableQPSLimits": True,
        # Heartbeats: kwokctl's defaults (heartbeatFactor 5) give 200 s node Leases renewed every
        # 50 s and a 3m20s node-monitor grace period: cheap enough for thousands of nodes.
    }
    for key, port in (ports or {}).items():
        if key not in PORT_OPTIONS:
            raise ValueError(f"unknown kwokctl port option {key!r}")
        options[key] = port
    kwok_options = {
        # kwok plays Stages and renews Leases with 4 workers each by default; thousands of nodes
        # becoming Ready at once wait on that, not on the apiserver.
        "nodePlayStageParallelism": 16,
        "podPlayStageParallelism": 16,
        "nodeLeaseParallelism": 16,
        # kwokctl writes every field of this document, so kwok's defaults must be spelled out.
        "enablePodsOnNodeSyncListPager": True,
        "enablePodsOnNodeSyncStreamWatch": False,
        "podsOnNodeSyncParallelism": 1,
        # kwok's default pod CIDR; without it pods get no IP (and no rank table can be written).
        "cidr": "10.0.0.1/24",
    }
    patches = [
        # kube-controller-manager exits when it cannot renew its leader lease within 5 s, which a
        # loaded 2-core apiserver with thousands of nodes does not always manage (seen at 4,000 nodes),
        # and nobody restarts it under kwokctl. There is only one: no election.
        {"name": "kube-controller-manager", "extraArgs": [{"key": "leader-elect", "value": "false"}]},
    ]
    return [
        {"apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokctlConfiguration", "options": options,
         "componentsPatches": patches},
        {"apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokConfiguration", "options": kwok_options},
        *stages,
    ]


def render_kwokctl_config(binaries: Binaries, stages: list[dict[str, Any]],
                          ports: dict[str, int] | None = None) -> str:
    return yaml.safe_dump_all(kwokctl_config(binaries, stages, ports), sort_keys=False)


def kwokctl_env(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KWOK_")}
    # kwokctl keeps its clusters (pids, logs, pki, etcd data) under $KWOK_WORKDIR/clusters/<name>.
    env["KWOK_WORKDIR"] = str(workdir)
    # kwokctl must never touch a developer's kubeconfig; every command also passes --kubeconfig=<a file of ours>.
    env.pop("KUBECONFIG", None)
    return env


def run_kwokctl(binaries: Binaries, workdir: Path, name: str, *args: str,
                timeout_s: float = 300.0) -> str:
    argv = [str(binaries.path("kwokctl")), f"--name={name}", *args]
    try:
        done = subprocess.run(argv, env=kwokctl_env(workdir), capture_output=True, text=True,
                              timeout=timeout_s, check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise KwokctlError(f"`{' '.join(argv)}` timed out after {timeout_s:.0f}s") from e
    if done.returncode != 0:
        raise KwokctlError(f"`{' '.join(argv)}` failed (exit {done.returncode}):\n"
                           f"{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return done.stdout + done.stderr
