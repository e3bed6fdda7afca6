"""The control-plane harness: kwokctl (etcd, kube-apiserver, kube-controller-manager, kwok) plus the
Volcano CRDs, vc-scheduler and vc-controller-manager, all on 127.0.0.1, under one directory per cluster.

    with ControlPlane("e2e").up() as cp:        # or cp = ControlPlane("e2e").up(detach=True)
        cp.add_nodes(fleet_inventory(profile="atlas-800t-a2", count=8))
        ...                                      # cp.kubeconfig, cp.api_client()
    # left: every process stopped, the directory removed

Two clusters with different names coexist: kwokctl picks free ports, and so does this module.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .binaries import VERSION_SET, Binaries, find_binaries
from .components import Component, build_vc_controller_manager, build_vc_scheduler
from .handle import KubeCluster
from .kwokctl import PORT_OPTIONS, KwokctlError, render_kwokctl_config, run_kwokctl
from .paths import fixtures_dir
from .process import ManagedProcess, probe_once, process_alive, stop_pid_file
from .stages import load_stages

if TYPE_CHECKING:
    from .fleet import FleetResult


__all__ = [
    "ClusterExists",
    "ClusterNotFound",
    "ControlPlane",
    "cluster_names",
    "default_state_root",
    "validate_name",
]

SCHEDULER_CONF = fixtures_dir() / "volcano" / "scheduler.conf"
CRDS_DIR = fixtures_dir() / "crds"
VOLCANO_COMPONENTS = ("vc-scheduler", "vc-controller-manager")


class ClusterExists(RuntimeError):
    """A cluster of that name already has a directory (run `down` first, or pick another name)."""


class ClusterNotFound(RuntimeError):
    """No cluster of that name."""


def default_state_root() -> Path:
    override = os.environ.get("NPU_EMU_STATE_DIR")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "npu-emu"


def validate_name(name: str) -> str:
    import re

    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?", name):
        raise ValueError(f"invalid cluster name {name!r}: use 1-40 lowercase letters, digits and '-'")
    return name


def cluster_names(state_root: Path | None = None) -> list[str]:
    root = (state_root or default_state_root()) / "clusters"
    return sorted(p.name for p in root.iterdir() if (p / "cluster.json").exists()) if root.exists() else []


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(slots=True)
class ClusterRecord:
    """cluster.json: what `status` and `down` need to know about a cluster started earlier."""

    name: str
    bin_dir: str
    version_set: str
    created_unix: float
    ports: dict[str, dict[str, int]] = field(default_factory=dict)
    timings_s: dict[str, float] = field(default_factory=dict)
    nodes: int = 0


class ControlPlane(KubeCluster):
    """One named cluster under `<state root>/clusters/<name>/`."""

    def __init__(self, name: str = "npu-emu", *, state_root: Path | None = None,
                 bin_dir: str | Path | None = None) -> None:
        state_dir = (state_root or default_state_root()) / "clusters" / validate_name(name)
        super().__init__(name, state_dir / "kubeconfig")
        self.dir = state_dir
        self._bin_dir = bin_dir
        self._processes: dict[str, ManagedProcess] = {}

    # ---- paths -------------------------------------------------------------------------------------
    @property
    def _kwokctl_kubeconfig(self) -> Path:
        # kwokctl adds/removes a context in the kubeconfig it is given (an empty path is refused on
        # delete): give it one of our own, so it never edits ~/.kube/config or $KUBECONFIG.
        return self.dir / "kwokctl-kubeconfig.yaml"

    @property
    def kwok_workdir(self) -> Path:
        return self.dir / "kwok"

    @property
    def kwok_cluster_dir(self) -> Path:
        return self.kwok_workdir / "clusters" / self.name

    @property
    def log_dir(self) -> Path:
        return self.dir / "logs"

    def _record_path(self) -> Path:
        return self.dir / "cluster.json"

    def record(self) -> ClusterRecord:
        try:
            return ClusterRecord(**json.loads(self._record_path().read_text()))
        except FileNotFoundError:
            raise ClusterNotFound(f"no cluster named {self.name!r} (looked in {self.dir})") from None

    def _write_record(self, record: ClusterRecord) -> None:
        tmp = self._record_path().with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(record), indent=2))
        tmp.replace(self._record_path())

    def exists(self) -> bool:
        return self._record_path().exists()

    # ---- bring-up ----------------------------------------------------------------------------------
    def up(self, *, detach: bool = False, timeout_s: float = 240.0,
           step: Any = None) -> ControlPlane:
        """Start everything. `step(msg)` is called before each phase (for progress output).

        detach=False: Volcano runs as children of this process and stops on down()/exit.
        detach=True: everything outlives this process; `down` (any process) stops it.
        """
        say = step or (lambda _msg: None)
        if self.dir.exists():
            raise ClusterExists(
                f"cluster {self.name!r} already exists ({self.dir}); run `npu-emu cluster down "
                f"--name {self.name}` first or choose another --name")
        binaries = find_binaries(self._bin_dir)
        self.dir.mkdir(parents=True)
        record = ClusterRecord(name=self.name, bin_dir=str(binaries.dir), version_set=VERSION_SET,
                               created_unix=time.time())
        self._write_record(record)
        try:
            t0 = time.monotonic()
            say("starting etcd, kube-apiserver, kube-controller-manager, kwok (kwokctl, binary runtime)")
            record.ports["kwokctl"] = {key: free_port() for key in PORT_OPTIONS}
            self._write_record(record)
            self._kwokctl_create(binaries, record.ports["kwokctl"], timeout_s)
            record.timings_s["kwokctl_create"] = round(time.monotonic() - t0, 2)
            t1 = time.monotonic()
            say("installing CRDs (Volcano, npu-emu)")
            n_crds = self._install_crds(binaries, timeout_s)
            record.timings_s["crds"] = round(time.monotonic() - t1, 2)
            t2 = time.monotonic()
            say(f"starting vc-scheduler and vc-controller-manager ({n_crds} CRDs established)")
            self._start_volcano(binaries, record, detach)
            record.timings_s["volcano"] = round(time.monotonic() - t2, 2)
            t3 = time.monotonic()
            say("starting the AscendJob controller (stand-in Ascend Operator)")
            record.ports["ascendjob-controller"] = {"healthz": free_port()}
            self._write_record(record)
            self.start_components([self.ascendjob_component(record.ports)], detach)
            record.timings_s["ascendjob_controller"] = round(time.monotonic() - t3, 2)
            record.timings_s["total"] = round(time.monotonic() - t0, 2)
            self._write_record(record)
        except BaseException:
            with contextlib.suppress(Exception):
                self.down()
            raise
        return self

    def _kwokctl_create(self, binaries: Binaries, ports: dict[str, int], timeout_s: float) -> None:
        config = self.dir / "kwokctl.yaml"
        config.write_text(render_kwokctl_config(binaries, load_stages(), ports))
        run_kwokctl(binaries, self.kwok_workdir, self.name, "create", "cluster", "--runtime=binary",
                    f"--config={config}", f"--kubeconfig={self._kwokctl_kubeconfig}",
                    f"--wait={int(timeout_s)}s",
                    f"--timeout={int(timeout_s)}s", timeout_s=timeout_s + 30)
        shutil.copyfile(self.kwok_cluster_dir / "kubeconfig.yaml", self.kubeconfig)
        self.kubeconfig.chmod(0o600)

    def _install_crds(self, binaries: Binaries, timeout_s: float) -> int:
        import yaml
        from kubernetes.client import ApiextensionsV1Api
        from kubernetes.client.exceptions import ApiException

        api: Any = ApiextensionsV1Api(self.api_client())  # raw responses (_preload_content=False)
        files = [*binaries.volcano_crds, *sorted(CRDS_DIR.rglob("*.yaml"))]
        names = []
        for path in files:
            for doc in yaml.safe_load_all(path.read_text()):
                if not doc or doc.get("kind") != "CustomResourceDefinition":
                    continue
                try:
                    _ = api.create_custom_resource_definition(doc, _preload_content=False).data
                except ApiException as e:
                    if e.status != 409:
                        raise RuntimeError(
                            f"installing CRD from {path}: {e.status} {e.reason}: {e.body}") from e
                names.append(doc["metadata"]["name"])
        deadline = time.monotonic() + timeout_s
        pending = set(names)
        while pending:
            for name in list(pending):
                crd = json.loads(api.read_custom_resource_definition(name, _preload_content=False).data)
                conds = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
                if conds.get("Established") == "True":
                    pending.discard(name)
            if pending and time.monotonic() > deadline:
                raise TimeoutError(f"CRDs not established after {timeout_s:.0f}s: {sorted(pending)}")
            if pending:
                time.sleep(0.2)
        return len(names)

    def volcano_components(self, binaries: Binaries, ports: dict[str, dict[str, int]]) -> list[Component]:
        sched, cm = ports["vc-scheduler"], ports["vc-controller-manager"]
        dump = self.dir / "vc-scheduler-cache"
        return [
            build_vc_scheduler(binaries.path("vc-scheduler"), kubeconfig=self.kubeconfig,
                               scheduler_conf=SCHEDULER_CONF, listen_port=sched["listen"],
                               healthz_port=sched["healthz"], dump_dir=dump),
            build_vc_controller_manager(binaries.path("vc-controller-manager"), kubeconfig=self.kubeconfig,
                                        listen_port=cm["listen"], healthz_port=cm["healthz"]),
        ]

    @property
    def ascendjob_ranktable_root(self) -> Path:
        """Where the AscendJob controller started by `up` writes rank-table files of jobs with a
        `ranktable` volume (`<root>/<namespace>.<job>/hccl.json`)."""
        return self.dir / "ranktable"

    def ascendjob_component(self, ports: dict[str, dict[str, int]]) -> Component:
        from .ascendjob.component import build_ascendjob_controller

        return build_ascendjob_controller(kubeconfig=self.kubeconfig,
                                          healthz_port=ports["ascendjob-controller"]["healthz"],
                                          ranktable_root=self.ascendjob_ranktable_root)

    def _start_volcano(self, binaries: Binaries, record: ClusterRecord, detach: bool) -> None:
        record.ports.update({n: {"listen": free_port(), "healthz": free_port()} for n in VOLCANO_COMPONENTS})
        self._write_record(record)
        (self.dir / "vc-scheduler-cache").mkdir(exist_ok=True)
        self.start_components(self.volcano_components(binaries, record.ports), detach)

    def start_components(self, components: list[Component], detach: bool) -> None:
        started: dict[str, ManagedProcess] = {}
        for component in components:
            proc = ManagedProcess(component, self.log_dir, ready_timeout_s=90)
            proc.start()
            pid_file = self.dir / "pids" / f"{component.name}.json"
            pid_file.parent.mkdir(exist_ok=True)
            pid_file.write_text(json.dumps({"pid": proc.pid, "argv": component.argv,
                                            "log": str(proc.log_path)}))
            self._processes[component.name] = started[component.name] = proc
        for proc in started.values():
            proc.wait_ready()
        if detach:
            for name, proc in started.items():
                proc.detach(self.dir / "pids" / f"{name}.json")
                del self._processes[name]

    # ---- status and teardown -----------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        record = self.record()
        procs: dict[str, str] = {}
        for pid_file in sorted((self.kwok_cluster_dir / "pids").glob("*.pid")):
            with contextlib.suppress(OSError, ValueError):
                pid = int(pid_file.read_text().strip())
                procs[pid_file.stem] = f"running (pid {pid})" if process_alive(pid) else "stopped"
        for name in (*VOLCANO_COMPONENTS, "ascendjob-controller", "npu-emu-serve"):
            port = record.ports.get(name, {}).get("healthz")
            from .components import HttpProbe

            healthy = bool(port) and probe_once(HttpProbe(f"http://127.0.0.1:{port}/healthz"), 1.0)
            procs[name] = "running (healthz ok)" if healthy else "not responding"
        out: dict[str, Any] = {"name": self.name, "dir": str(self.dir), "kubeconfig": str(self.kubeconfig),
                               "bin_dir": record.bin_dir, "ports": record.ports, "processes": procs,
                               "timings_s": record.timings_s}
        try:
            from .fleet import count_ready

            total, ready, chips = count_ready(self.api_client(), self.label_selector)
            out["nodes"] = {"total": total, "ready": ready, "ascend910_allocatable": chips}
            out["apiserver"] = "ok"
        except Exception as e:  # the status of a broken cluster is still a status
            out["apiserver"] = f"unreachable: {type(e).__name__}: {str(e)[:200]}"
        return out

    def down(self) -> list[str]:
        """Stop every process this cluster started and remove its directory; return what was stopped."""
        if not self.dir.exists():
            raise ClusterNotFound(f"no cluster named {self.name!r} (looked in {self.dir})")
        stopped: list[str] = []
        errors: list[str] = []
        for name, proc in list(self._processes.items()):
            try:
                proc.stop()
                stopped.append(name)
            except Exception as e:
                errors.append(f"{name}: {e}")
        self._processes.clear()
        for pid_file in sorted((self.dir / "pids").glob("*.json")):
            try:
                if stop_pid_file(pid_file):
                    stopped.append(pid_file.stem)
            except Exception as e:
                errors.append(f"{pid_file.stem}: {e}")
        if self.kwok_cluster_dir.exists():
            try:
                bin_dir = self._bin_dir or self._record_bin_dir()
                run_kwokctl(find_binaries(bin_dir), self.kwok_workdir, self.name, "delete", "cluster",
                            f"--kubeconfig={self._kwokctl_kubeconfig}", timeout_s=120)
                stopped.append("kwokctl cluster (etcd, kube-apiserver, kube-controller-manager, kwok)")
            except (KwokctlError, RuntimeError) as e:
                errors.append(f"kwokctl delete cluster: {e}")
                stopped += self._kill_kwokctl_pids()
        self.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        if errors:
            raise RuntimeError(f"cluster {self.name!r} removed, with errors: " + "; ".join(errors))
        return stopped

    def _record_bin_dir(self) -> str | None:
        try:
            return self.record().bin_dir
        except (ClusterNotFound, ValueError, TypeError):
            return None

    def _kill_kwokctl_pids(self) -> list[str]:
        """Fallback when kwokctl cannot delete: stop the processes from kwokctl's pid files."""
        from .process import stop_process_group

        stopped = []
        for pid_file in sorted((self.kwok_cluster_dir / "pids").glob("*.pid")):
            with contextlib.suppress(OSError, ValueError):
                pid = int(pid_file.read_text().strip())
                if process_alive(pid) and str(self.kwok_cluster_dir) in " ".join(
                        Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")):
                    pgid = os.getpgid(pid)
                    if pgid == os.getpgrp():  # never signal our own group
                        os.kill(pid, 9)
                    else:
                        stop_process_group(pgid)
                    stopped.append(pid_file.stem)
        return stopped

    def add_nodes(self, nodes: Any, **kwargs: Any) -> FleetResult:
        result = super().add_nodes(nodes, **kwargs)
        with contextlib.suppress(ClusterNotFound, OSError):
            record = self.record()
            record.nodes = self.count_nodes()[0]
            self._write_record(record)
        return result

    def __enter__(self) -> ControlPlane:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.dir.exists():
            self.down()
