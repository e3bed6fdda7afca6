from __future__ import annotations

import pytest

from runtime_hook import RuntimeHookError
from runtime_hook.mount_list import check, plan, read_lists
from runtime_hook.testing import EmulatedNode


def test_base_list_existing_entries_and_npu_smi_support(node: EmulatedNode) -> None:
    files, dirs = read_lists(node.root, ["base"])
    assert files == ["/usr/local/bin/npu-smi"]
    assert dirs == ["/usr/local/Ascend/driver/lib64", "/usr/local/Ascend/driver/include", "/usr/local/dcmi"]
    check(node.root, [*files, *dirs], allow_link=False)
    mounts = plan(node.root, files, dirs)
    assert [m.target for m in mounts] == [
        "/usr/local/bin/npu-smi", "/usr/local/Ascend/driver/lib64", "/usr/local/Ascend/driver/include",
        "/usr/local/dcmi", "/usr/local/Ascend/driver/tools", "/usr/local/Ascend/driver/npu-emu"]
    assert all(m.source == node.root.host(m.target) for m in mounts)


def test_extra_paths_and_other_lists(node: EmulatedNode) -> None:
    node.root.host("/etc/hccl_rootinfo.json").write_text("{}")
    node.root.host("/etc/ascend-docker-runtime.d/extra.list").write_text(
        "/usr/local/Ascend/driver/tools\nrelative/ignored\n\n/nonexistent\n")
    files, dirs = read_lists(node.root, ["extra"])
    assert (files, dirs) == (["/etc/hccl_rootinfo.json"], ["/usr/local/Ascend/driver/tools"])
    assert [m.target for m in plan(node.root, files, dirs)] == [
        "/etc/hccl_rootinfo.json", "/usr/local/Ascend/driver/tools"]  # no npu-smi: no extras


def test_list_errors(node: EmulatedNode) -> None:
    with pytest.raises(RuntimeHookError, match="failed to process config missing: cannot stat base"):
        read_lists(node.root, ["missing"])
    node.root.host("/etc/ascend-docker-runtime.d/long.list").write_text("/x\n" * 129)
    with pytest.raises(RuntimeHookError, match="failed to process config long: mount list too long"):
        read_lists(node.root, ["long"])


def test_whitelist_and_soft_links(node: EmulatedNode) -> None:
    with pytest.raises(RuntimeHookError, match="failed to check whiteList value: /etc/passwd"):
        check(node.root, ["/etc/passwd"], allow_link=False)
    dcmi = node.root.host("/usr/local/dcmi")
    dcmi.rename(dcmi.with_name("dcmi.real"))
    dcmi.symlink_to(dcmi.with_name("dcmi.real"))
    with pytest.raises(RuntimeHookError, match="soft link"):
        check(node.root, ["/usr/local/dcmi"], allow_link=False)
    check(node.root, ["/usr/local/dcmi"], allow_link=True)
