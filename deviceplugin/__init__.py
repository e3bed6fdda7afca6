"""Kubelet device plugin backed by the npu-emu emulator, and fleet mode for kubelet-less kwok nodes."""
