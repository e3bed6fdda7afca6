"""Optional run logs, like /var/log/ascend-docker-runtime/{runtime-run,hook-run}.log. Stdlib only.

Written only when NPU_EMU_RUNTIME_LOG_DIR is set; a log that cannot be written never fails a container.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from .constants import ENV_LOG_DIR


def log(component: str, message: str, environ: Mapping[str, str]) -> None:
    directory = environ.get(ENV_LOG_DIR)
    if not directory:
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    try:
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, f"{component}-run.log"), "a") as f:
            f.write(f"{stamp} [{os.getpid()}] {message}\n")
    except OSError:
        pass
