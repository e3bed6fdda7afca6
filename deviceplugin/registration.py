"""Registering with the kubelet, and noticing when the kubelet restarts (its socket is recreated)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import grpc

from . import constants as k
from .v1beta1 import api_pb2, api_pb2_grpc
from .v1beta1.constants import Version

__all__ = ["SocketWatch", "register"]


def register(
    kubelet_socket: Path,
    *,
    endpoint: str = k.ENDPOINT,
    resource_name: str = k.RESOURCE_NAME,
    preferred_allocation: bool = True,
    timeout: float = 5.0,
) -> None:
    """Register with the kubelet at `kubelet_socket`; raises grpc.RpcError if it refuses or is absent."""
    with grpc.insecure_channel(f"unix://{kubelet_socket}") as channel:
        stub = api_pb2_grpc.RegistrationStub(channel)
        stub.Register(
            api_pb2.RegisterRequest(
                version=Version,
                endpoint=endpoint,
                resource_name=resource_name,
                options=api_pb2.DevicePluginOptions(
                    pre_start_required=False, get_preferred_allocation_available=preferred_allocation
                ),
            ),
            timeout=timeout,
            wait_for_ready=True,
        )


@dataclass(frozen=True)
class _Identity:
    inode: int
    ctime_ns: int


class SocketWatch:
    """Tells whether a socket file was removed or recreated since the last look (kubelet restarts)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen = self._identity()

    def _identity(self) -> _Identity | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return _Identity(st.st_ino, st.st_ctime_ns)

    @property
    def present(self) -> bool:
        return self._seen is not None

    def changed(self) -> bool:
        now = self._identity()
        if now != self._seen:
            self._seen = now
            return True
        return False
