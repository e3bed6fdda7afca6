"""Fault injection for users' test suites: inject a fault or replay a scenario, then assert recovery.

    def test_job_survives_ecc(npu_faults, my_job):
        pod = npu_faults.pods("default", "training.kubeflow.org/job-name=my-job")[0]
        fault = npu_faults.inject_on_pod(pod, kind="hbm-multi-bit-ecc")
        npu_faults.wait_recovered("default", "my-job", avoid=fault)
        npu_faults.clear(fault)

`NpuFaults` needs an emulator client (emulator.client.EmulatorClient) and a kubernetes ApiClient; the
pytest fixture `npu_faults` (below; registered by the npu_emu plugin, or import it into a conftest) builds
it from the plugin's `emulator_client` and `kube_client` fixtures and clears every fault it injected at
the end of the test. Scenarios of the library (fixtures/scenarios/) name `npu-node-0`: `replay(name,
nodes={"npu-node-0": "my-node"})` renames nodes before replaying.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["NpuFaults", "PodRecorder", "Recovered", "npu_faults", "pod_chips", "wait_until"]

CONFIGURATION = "ascend.kubectl.kubernetes.io/ascend-910-configuration"
ACJOB = ("mindxdl.gitee.com", "v1", "ascendjobs")
VCJOB = ("batch.volcano.sh", "v1alpha1", "jobs")
DEVICE_INFO_NS = "kube-system"


def wait_until(what: str, probe: Callable[[], T | None], timeout_s: float = 90.0, interval_s: float = 0.2) -> T:
    """Poll `probe` until it returns something truthy; AssertionError naming `what` and the last value."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while True:
        last = probe()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}; last value: {last!r}")
        time.sleep(interval_s)


@dataclass(frozen=True)
class Recovered:
    """A job back on its feet: its pods (name -> uid) and the chips they hold (name -> (node, phy ids))."""

    pods: dict[str, str]
    chips: dict[str, tuple[str, tuple[int, ...]]]
    seconds: float


def pod_chips(pod: Any) -> tuple[str, tuple[int, ...]] | None:
    """(node, phy ids) from the device plugin's ascend-910-configuration annotation of a V1Pod."""
    raw = (pod.metadata.annotations or {}).get(CONFIGURATION)
    if not raw or not pod.spec.node_name:
        return None
    devices = json.loads(raw).get("devices") or []
    return pod.spec.node_name, tuple(sorted(int(d["device_id"]) for d in devices))


def _rename_nodes(obj: Any, nodes: Mapping[str, str]) -> Any:
    if isinstance(obj, dict):
        return {k: (nodes.get(v, v) if k == "node" and isinstance(v, str) else _rename_nodes(v, nodes))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rename_nodes(v, nodes) for v in obj]
    return obj


class PodRecorder:
    """Every state each pod of a namespace went through, from a watch: pods that fail are often deleted
    (and replaced) by their controller within milliseconds, faster than polling sees them."""

    def __init__(self, core: Any, namespace: str) -> None:
        import threading

        self.core = core
        self.namespace = namespace
        self.seen: dict[str, list[Any]] = {}  # pod uid -> V1Pod versions, oldest first
        self.arrived: dict[str, list[float]] = {}  # pod uid -> time.monotonic() each version arrived
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"pod-recorder-{namespace}")

    def __enter__(self) -> PodRecorder:
        self._thread.start()
        self._ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        from kubernetes import watch

        version = None
        while not self._stop.is_set():
            try:
                if version is None:
                    listing = self.core.list_namespaced_pod(self.namespace)
                    for pod in listing.items:
                        self._add(pod)
                    version = listing.metadata.resource_version
                    self._ready.set()
                for ev in watch.Watch().stream(self.core.list_namespaced_pod, self.namespace,
                                               resource_version=version, timeout_seconds=2):
                    if ev["type"] == "ERROR":  # e.g. 410: the resume point is gone
                        version = None
                        break
                    self._add(ev["object"])
                    version = ev["object"].metadata.resource_version
                    if self._stop.is_set():
                        return
            except Exception:
                version = None
                self._stop.wait(0.2)

    def _add(self, pod: Any) -> None:
        with self._lock:
            self.seen.setdefault(pod.metadata.uid, []).append(pod)
            self.arrived.setdefault(pod.metadata.uid, []).append(time.monotonic())

    def first_time(self, uid: str, predicate: Callable[[Any], bool]) -> float | None:
        """time.monotonic() when the first version of the pod matching `predicate` arrived."""
        with self._lock:
            for pod, at in zip(self.seen.get(uid, []), self.arrived.get(uid, []), strict=True):
                if predicate(pod):
                    return at
        return None

    def failed(self, uid: str) -> Any | None:
        """The pod's first version with phase Failed, if it got there."""
        with self._lock:
            return next((p for p in self.seen.get(uid, []) if p.status and p.status.phase == "Failed"), None)

    def wait_failed(self, uid: str, timeout_s: float = 60.0) -> Any:
        return wait_until(f"pod {uid} Failed", lambda: self.failed(uid), timeout_s=timeout_s, interval_s=0.05)

    def wait_any_failed(self, uids: Iterable[str], timeout_s: float = 60.0) -> Any:
        """The first of these pods to reach Failed (a job restart can delete the others before they do)."""
        wanted = list(uids)

        def probe() -> Any | None:
            found = [(self.first_time(u, lambda p: p.status is not None and p.status.phase == "Failed"), u)
                     for u in wanted]
            done = sorted((t, u) for t, u in found if t is not None)
            return self.failed(done[0][1]) if done else None

        return wait_until(f"one of {len(wanted)} pods Failed", probe, timeout_s=timeout_s, interval_s=0.05)


class NpuFaults:
    def __init__(self, emulator: Any, api_client: Any) -> None:
        from kubernetes.client import CoreV1Api, CustomObjectsApi

        self.emulator = emulator
        self.core: Any = CoreV1Api(api_client)
        self.custom: Any = CustomObjectsApi(api_client)
        self.injected: list[str] = []

    # injecting ---------------------------------------------------------------------------------------
    def inject(self, kind: str | None = None, selector: Mapping[str, Any] | None = None, *, code: str | None = None,
               node: str | None = None, chips: Iterable[int] | None = None, **kwargs: Any) -> dict[str, Any]:
        """POST /v1/faults. `selector` as the REST API takes it, or `node=` (and `chips=`) for short."""
        sel = dict(selector or {})
        if node is not None:
            sel["node"] = node
        if chips is not None:
            sel["chips"] = list(chips)
        fault: dict[str, Any] = self.emulator.inject(sel, kind=kind, code=code, **kwargs)
        self.injected.append(str(fault["id"]))
        return fault

    def inject_on_pod(self, pod: Any, kind: str | None = None, *, code: str | None = None, chip_index: int = 0,
                      **kwargs: Any) -> dict[str, Any]:
        """Fault one chip the pod holds (its `chip_index`-th, by phy id)."""
        held = pod_chips(pod)
        if held is None:
            raise ValueError(f"pod {pod.metadata.name} holds no chips yet (no {CONFIGURATION} annotation)")
        node, phys = held
        return self.inject(kind, code=code, node=node, chips=[phys[chip_index]], **kwargs)

    def replay(self, scenario: str | Path | Mapping[str, Any], *,
               nodes: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Replay a library scenario (by name), a YAML file or a parsed scenario, renaming nodes first."""
        import yaml

        if isinstance(scenario, Mapping):
            body = dict(scenario)
        else:
            path = Path(scenario)
            if not path.suffix:
                from emulator.profiles import fixtures_dir

                path = fixtures_dir() / "scenarios" / f"{scenario}.yaml"
            body = yaml.safe_load(path.read_text())
        if nodes:
            body = _rename_nodes(body, nodes)
        result: dict[str, Any] = self.emulator.replay(body)
        self.injected.extend(str(f["id"]) for f in result.get("faults", []))
        return result

    def clear(self, fault: Mapping[str, Any] | str) -> None:
        fid = fault if isinstance(fault, str) else str(fault["id"])
        from emulator.client import EmulatorError

        try:
            self.emulator.clear(fid)
        except EmulatorError as e:
            if e.status != 404:
                raise

    def clear_all(self) -> None:
        """Clear every fault this helper injected that is still scheduled, active or recovering."""
        from emulator.client import EmulatorError

        for fid in self.injected:
            with contextlib.suppress(EmulatorError):
                if self.emulator.fault(fid).get("state") in ("scheduled", "active"):
                    self.emulator.clear(fid)
        self.injected.clear()

    # observing ---------------------------------------------------------------------------------------
    def chip(self, node: str, phy_id: int) -> dict[str, Any]:
        return dict(self.emulator.chip(node, phy_id))

    def allocatable(self, node: str, resource: str = "huawei.com/Ascend910") -> int:
        return int((self.core.read_node_status(node).status.allocatable or {}).get(resource, 0))

    def device_info(self, node: str) -> dict[str, Any]:
        """The node's mindx-dl-deviceinfo ConfigMap: DeviceList (parsed, Fault list parsed too) and
        ManuallySeparateNPU."""
        from kubernetes.client.exceptions import ApiException

        try:
            cm = self.core.read_namespaced_config_map(f"mindx-dl-deviceinfo-{node}", DEVICE_INFO_NS)
        except ApiException as e:
            if e.status != 404:
                raise
            # fleet mode has not written this node yet: nothing is listed, callers wait for a change
            return {"DeviceList": {"huawei.com/Ascend910-Fault": []}, "ManuallySeparateNPU": ""}
        data = cm.data or {}
        devices = dict(json.loads(data["DeviceInfoCfg"])["DeviceInfo"]["DeviceList"])
        devices["huawei.com/Ascend910-Fault"] = json.loads(devices.get("huawei.com/Ascend910-Fault") or "[]")
        return {"DeviceList": devices, "ManuallySeparateNPU": data.get("ManuallySeparateNPU", "")}

    def node_events(self, node: str, reason: str | None = None) -> list[Any]:
        """The device plugin's fault Events about `node` (kube-system, reporting component device-plugin)."""
        events = self.core.list_namespaced_event(DEVICE_INFO_NS).items
        return [e for e in events if e.source and e.source.host == node and e.source.component == "device-plugin"
                and (reason is None or e.reason == reason)]

    def pod_events(self, namespace: str, pod: str) -> list[Any]:
        return list(self.core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={pod}").items)

    def record_pods(self, namespace: str) -> PodRecorder:
        """`with ft.record_pods(ns) as rec: ...; rec.wait_failed(uid)`."""
        return PodRecorder(self.core, namespace)

    def pods(self, namespace: str, selector: str) -> list[Any]:
        return sorted(self.core.list_namespaced_pod(namespace, label_selector=selector).items,
                      key=lambda p: p.metadata.name)

    def job_pods(self, namespace: str, job: str, kind: str = "AscendJob") -> list[Any]:
        label = "training.kubeflow.org/job-name" if kind == "AscendJob" else "volcano.sh/job-name"
        return self.pods(namespace, f"{label}={job}")

    def job(self, namespace: str, name: str, kind: str = "AscendJob") -> dict[str, Any]:
        group, version, plural = ACJOB if kind == "AscendJob" else VCJOB
        return dict(self.custom.get_namespaced_custom_object(group, version, namespace, plural, name))

    # recovery ----------------------------------------------------------------------------------------
    def wait_recovered(self, namespace: str, job: str, *, kind: str = "AscendJob", replicas: int | None = None,
                       replaced: Iterable[str] = (), avoid: Mapping[str, Any] | Iterable[Mapping[str, Any]] = (),
                       timeout_s: float = 180.0, interval_s: float = 0.1) -> Recovered:
        """Wait until the job runs again: `replicas` pods (default: as many as now, Failed ones excluded), all
        Running and holding chips, none of the pod uids in `replaced`, none on a chip targeted by the
        fault(s) in `avoid`, none on a chip the emulator reports unhealthy; for an AscendJob also
        condition Running and a completed rank table naming exactly these pods; for a Volcano Job phase
        Running."""
        start = time.monotonic()
        old = set(replaced)
        faults = [avoid] if isinstance(avoid, Mapping) else list(avoid)
        bad = {(t["node"], int(t["phy_id"])) for f in faults for t in f.get("targets", [])}
        want = replicas

        why = ["nothing polled yet"]

        def probe() -> Recovered | None:
            pods = [p for p in self.job_pods(namespace, job, kind)
                    if not p.metadata.deletion_timestamp and p.status.phase != "Failed"]
            n = want if want is not None else len(pods)
            why[0] = f"pods {[(p.metadata.name, p.status.phase, pod_chips(p)) for p in pods]}"
            if not pods or len(pods) != n or any(p.status.phase != "Running" for p in pods):
                return None
            if {p.metadata.uid for p in pods} & old:
                why[0] += "; old pods still there"
                return None
            chips: dict[str, tuple[str, tuple[int, ...]]] = {}
            for p in pods:
                held = pod_chips(p)
                if held is None or any((held[0], c) in bad for c in held[1]):
                    why[0] += f"; {p.metadata.name} holds no chips or faulty ones"
                    return None
                chips[p.metadata.name] = held
            state = self._job_state(namespace, job, kind, {p.metadata.uid for p in pods})
            if state:
                why[0] += f"; {state}"
                return None
            return Recovered({p.metadata.name: p.metadata.uid for p in pods}, chips, time.monotonic() - start)

        try:
            got = wait_until(f"{kind} {namespace}/{job} to recover", probe, timeout_s=timeout_s,
                             interval_s=interval_s)
        except AssertionError as e:
            raise AssertionError(f"{e}: {why[0]}") from None
        for node, phys in got.chips.values():
            for phy in phys:
                chip = self.emulator.chip(node, phy)
                assert chip["present"] and chip["fault_level"] in ("NormalNPU", "NotHandleFault", "SubHealthFault"), \
                    f"{node} chip {phy} was given to a recovered pod while {chip['fault_level']}"
        return got

    def _job_state(self, namespace: str, job: str, kind: str, uids: set[str]) -> str:
        """Why the job is not running on exactly these pods yet ("" when it is)."""
        obj = self.job(namespace, job, kind)
        status = obj.get("status") or {}
        if kind != "AscendJob":
            phase = (status.get("state") or {}).get("phase")
            return "" if phase == "Running" else f"phase {phase}"
        conds = {c["type"]: c["status"] for c in status.get("conditions") or []}
        if conds.get("Running") != "True" or conds.get("Restarting") == "True":
            return f"conditions {conds}"
        try:
            cm = self.core.read_namespaced_config_map(f"rings-config-{job}", namespace)
        except Exception:
            return "no rank table"
        table = json.loads((cm.data or {}).get("hccl.json") or "{}")
        if table.get("status") != "completed":
            return f"rank table {table.get('status')}"
        if {s["server_id"] for s in table.get("server_list", [])} != uids:
            return "rank table names other pods"
        return ""


def npu_faults_fixture(emulator_client: Any, kube_client: Any) -> Iterator[NpuFaults]:
    helper = NpuFaults(emulator_client, kube_client)
    try:
        yield helper
    finally:
        helper.clear_all()


def _register() -> Any:
    import pytest

    @pytest.fixture
    def npu_faults(emulator_client: Any, kube_client: Any) -> Iterator[NpuFaults]:
        """NpuFaults on the session's emulator and cluster; faults it injected are cleared afterwards."""
        yield from npu_faults_fixture(emulator_client, kube_client)

    return npu_faults


npu_faults = _register()
