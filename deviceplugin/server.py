"""Serving the DevicePlugin service on a unix socket: a servicer plus start/stop (grpc examples' shape)."""

from __future__ import annotations

import contextlib
import os
import time
from concurrent import futures
from pathlib import Path

import grpc

from .servicer import DevicePluginServicer
from .v1beta1 import api_pb2_grpc

__all__ = ["PluginServer"]


class PluginServer:
    """One gRPC server on <dir>/<endpoint>; `start()` again after `stop()` recreates the socket."""

    def __init__(self, servicer: DevicePluginServicer, socket_path: Path, *, max_workers: int = 16) -> None:
        self.servicer = servicer
        self.socket_path = socket_path
        self.max_workers = max_workers
        self._server: grpc.Server | None = None

    def start(self) -> None:
        if self._server is not None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()  # a stale socket from an earlier run
        self.servicer._stopping.clear()
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=self.max_workers, thread_name_prefix="dp-grpc"))
        api_pb2_grpc.add_DevicePluginServicer_to_server(self.servicer, server)
        server.add_insecure_port(f"unix://{self.socket_path}")
        server.start()
        deadline = time.monotonic() + 5
        while not self.socket_path.exists():
            if time.monotonic() > deadline:
                server.stop(0)
                raise RuntimeError(f"the device-plugin socket {self.socket_path} did not appear")
            time.sleep(0.005)
        self._server = server

    def stop(self, grace: float = 1.0) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self.servicer.stop_streams()
        server.stop(grace).wait(grace + 1)
        with contextlib.suppress(FileNotFoundError):
            if self.socket_path.exists() and not os.path.isdir(self.socket_path):
                self.socket_path.unlink()

    @property
    def running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> PluginServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
