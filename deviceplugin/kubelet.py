"""Kubelet mode: serve the plugin, register, and re-register whenever the kubelet or the emulator restarts."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import grpc

from . import constants as k
from .registration import SocketWatch, register
from .server import PluginServer
from .servicer import DevicePluginServicer

__all__ = ["KubeletPlugin"]

log = logging.getLogger(__name__)


class KubeletPlugin:
    """Runs until `stop` is set: keeps the plugin socket served and registered with the current kubelet."""

    def __init__(
        self,
        servicer: DevicePluginServicer,
        plugin_dir: Path,
        *,
        endpoint: str = k.ENDPOINT,
        resource_name: str = k.RESOURCE_NAME,
        poll_s: float = 0.05,
    ) -> None:
        self.servicer = servicer
        self.plugin_dir = Path(plugin_dir)
        self.endpoint = endpoint
        self.resource_name = resource_name
        self.poll_s = poll_s
        self.server = PluginServer(servicer, self.plugin_dir / endpoint)
        self.registrations = 0
        self.registered = threading.Event()
        self._reregister = threading.Event()

    def request_reregister(self) -> None:
        """Restart the socket and register again (called when the emulator comes back)."""
        self._reregister.set()

    def run(self, stop: threading.Event) -> None:
        kubelet_socket = self.plugin_dir / "kubelet.sock"
        watch = SocketWatch(kubelet_socket)
        need = True
        try:
            self.server.start()
            while not stop.is_set():
                if watch.changed() or self._reregister.is_set() or not (self.plugin_dir / self.endpoint).exists():
                    self._reregister.clear()
                    self.registered.clear()
                    self.server.stop(grace=0.2)  # kubelet drops its old streams; ours end here too
                    self.server.start()
                    need = True
                if need and watch.present:
                    need = not self._try_register(kubelet_socket)
                stop.wait(self.poll_s)
        finally:
            self.server.stop()

    def _try_register(self, kubelet_socket: Path) -> bool:
        try:
            register(kubelet_socket, endpoint=self.endpoint, resource_name=self.resource_name, timeout=2)
        except grpc.RpcError as exc:
            log.warning("registration with kubelet at %s failed: %s", kubelet_socket, exc.details() or exc)
            return False
        self.registrations += 1
        self.registered.set()
        log.info("registered %s with kubelet (%d)", self.resource_name, self.registrations)
        return True
