"""A kubelet stand-in for tests: Registration on a real unix socket, driving plugins the way kubelet does.

    with KubeletStub(plugin_dir) as kubelet:
        ...start the plugin against plugin_dir...
        plugin = kubelet.wait_registered()
        kubelet.wait_devices(lambda devs: devs["Ascend910-3"] == "Unhealthy")
        kubelet.allocate(["Ascend910-0"])

On Register it checks the version, connects to <dir>/<endpoint>, calls GetDevicePluginOptions and keeps a
ListAndWatch stream open, recording every list. `restart()` does what a kubelet restart does: its socket
goes away, every socket in the directory is removed, and a new kubelet.sock appears.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from .v1beta1 import api_pb2, api_pb2_grpc
from .v1beta1.constants import SupportedVersions

__all__ = ["KubeletStub", "RegisteredPlugin"]

Devices = dict[str, str]


@dataclass
class RegisteredPlugin:
    """One registration and the streams kubelet opened for it."""

    request: api_pb2.RegisterRequest
    channel: grpc.Channel
    stub: api_pb2_grpc.DevicePluginStub
    options: api_pb2.DevicePluginOptions | None = None
    updates: list[tuple[float, api_pb2.ListAndWatchResponse]] = field(default_factory=list)
    stream: grpc.Future | None = None
    ended: threading.Event = field(default_factory=threading.Event)


class KubeletStub(api_pb2_grpc.RegistrationServicer):
    def __init__(self, plugin_dir: Path, *, clean_on_start: bool = True) -> None:
        self.plugin_dir = Path(plugin_dir)
        self.socket = self.plugin_dir / "kubelet.sock"
        self.clean_on_start = clean_on_start
        self.registrations: list[RegisteredPlugin] = []
        self._cond = threading.Condition()
        self._server: grpc.Server | None = None

    # lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> KubeletStub:
        self.plugin_dir.mkdir(parents=True, exist_ok=True)
        if self.clean_on_start:  # kubelet removes stale sockets, the plugins' cue to re-register
            for entry in self.plugin_dir.glob("*.sock"):
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="kubelet-stub"))
        api_pb2_grpc.add_RegistrationServicer_to_server(self, server)
        server.add_insecure_port(f"unix://{self.socket}")
        server.start()
        self._server = server
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop(0).wait(2)
        with self._cond:
            for reg in self.registrations:
                reg.channel.close()
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()

    def restart(self, downtime_s: float = 0.1) -> None:
        self.stop()
        time.sleep(downtime_s)
        self.start()

    def __enter__(self) -> KubeletStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # Registration service --------------------------------------------------------------------------
    def Register(self, request: api_pb2.RegisterRequest, context: grpc.ServicerContext) -> api_pb2.Empty:
        if request.version not in SupportedVersions:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unsupported API version {request.version}")
        endpoint = self.plugin_dir / request.endpoint
        if not endpoint.exists():
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"no plugin socket at {endpoint}")
        channel = grpc.insecure_channel(f"unix://{endpoint}")
        reg = RegisteredPlugin(request=request, channel=channel, stub=api_pb2_grpc.DevicePluginStub(channel))
        threading.Thread(target=self._drive, args=(reg,), daemon=True, name="kubelet-stub-law").start()
        with self._cond:
            self.registrations.append(reg)
            self._cond.notify_all()
        return api_pb2.Empty()

    def _drive(self, reg: RegisteredPlugin) -> None:
        try:
            reg.options = reg.stub.GetDevicePluginOptions(api_pb2.Empty(), timeout=5)
            stream = reg.stub.ListAndWatch(api_pb2.Empty())
            reg.stream = stream
            for resp in stream:
                with self._cond:
                    reg.updates.append((time.monotonic(), resp))
                    self._cond.notify_all()
        except grpc.RpcError:
            pass
        finally:
            reg.ended.set()
            with self._cond:
                self._cond.notify_all()

    # what tests use ----------------------------------------------------------------------------------
    @property
    def current(self) -> RegisteredPlugin:
        with self._cond:
            if not self.registrations:
                raise LookupError("no plugin has registered")
            return self.registrations[-1]

    def wait_registered(self, count: int = 1, timeout: float = 10.0) -> RegisteredPlugin:
        """Wait for the count-th registration and its first device list."""
        with self._cond:
            if not self._cond.wait_for(
                lambda: len(self.registrations) >= count and bool(self.registrations[count - 1].updates),
                timeout=timeout,
            ):
                raise TimeoutError(f"{len(self.registrations)} registrations, waited for {count}")
            return self.registrations[count - 1]

    def devices(self) -> Devices:
        reg = self.current
        with self._cond:
            if not reg.updates:
                return {}
            return {d.ID: d.health for d in reg.updates[-1][1].devices}

    def wait_devices(self, predicate: Callable[[Devices], bool], timeout: float = 10.0) -> Devices:
        deadline = time.monotonic() + timeout
        while True:
            with self._cond:
                regs = list(self.registrations)
                if regs and regs[-1].updates:
                    devs = {d.ID: d.health for d in regs[-1].updates[-1][1].devices}
                    if predicate(devs):
                        return devs
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"device list never matched; last: {self._last_repr()}")
                self._cond.wait(left)

    def _last_repr(self) -> str:
        if not self.registrations or not self.registrations[-1].updates:
            return "none"
        return str({d.ID: d.health for d in self.registrations[-1].updates[-1][1].devices})

    def preferred(self, available: Sequence[str], size: int, must_include: Sequence[str] = ()) -> list[str]:
        req = api_pb2.PreferredAllocationRequest(
            container_requests=[
                api_pb2.ContainerPreferredAllocationRequest(
                    available_deviceIDs=list(available),
                    must_include_deviceIDs=list(must_include),
                    allocation_size=size,
                )
            ]
        )
        return list(self.current.stub.GetPreferredAllocation(req, timeout=10).container_responses[0].deviceIDs)

    def allocate(self, *containers: Sequence[str], timeout: float = 10.0) -> api_pb2.AllocateResponse:
        req = api_pb2.AllocateRequest(
            container_requests=[api_pb2.ContainerAllocateRequest(devices_ids=list(ids)) for ids in containers]
        )
        return self.current.stub.Allocate(req, timeout=timeout)

    def pre_start(self, ids: Sequence[str]) -> api_pb2.PreStartContainerResponse:
        req = api_pb2.PreStartContainerRequest(devices_ids=list(ids))
        return self.current.stub.PreStartContainer(req, timeout=10)
