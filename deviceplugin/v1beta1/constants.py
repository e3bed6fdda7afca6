"""Protocol constants of the kubelet device-plugin API v1beta1 (as constants.go beside api.proto)."""

from __future__ import annotations

Healthy = "Healthy"
Unhealthy = "Unhealthy"

Version = "v1beta1"
DevicePluginPath = "/var/lib/kubelet/device-plugins/"
KubeletSocket = DevicePluginPath + "kubelet.sock"
KubeletPreStartContainerRPCTimeoutInSecs = 30

SupportedVersions: tuple[str, ...] = ("v1beta1",)

__all__ = [
    "DevicePluginPath",
    "Healthy",
    "KubeletPreStartContainerRPCTimeoutInSecs",
    "KubeletSocket",
    "SupportedVersions",
    "Unhealthy",
    "Version",
]
