import subprocess
import sys

import cluster


def test_plugin_and_package_import_nothing_heavy():
    code = (
        "import sys, cluster, cluster.pytest_plugin, cluster.cli\n"
        "heavy = [m for m in ('kubernetes', 'rich', 'yaml', 'emulator', 'httpx') if m in sys.modules]\n"
        "print(heavy); sys.exit(1 if heavy else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_public_surface():
    assert sorted(cluster.__all__) == cluster.__all__
    for name in cluster.__all__:
        assert getattr(cluster, name) is not None


def test_plugin_options_in_pytest_help():
    done = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0
    out = done.stdout
    assert "npu-emu control plane and emulator:" in out
    for opt in ("--npu-emu-kubeconfig", "--npu-emu-cluster-name", "--npu-emu-keep-cluster",
                "--npu-emu-bin-dir", "--npu-emu-url"):
        assert opt in out
