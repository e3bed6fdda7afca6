"""npu-emu: emulated Huawei Ascend NPUs.

This package must stay cheap to import: `npu-smi` and `hccn_tool` import submodules of it on every call.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
