"""Emulated `npu-smi` (stdlib only; imported on every call, so it must stay light).

Nothing here may import outside `emulator.npu_smi` and the standard library: devfs copies this package
into an emulated driver tree where it runs with a bare interpreter.
"""
