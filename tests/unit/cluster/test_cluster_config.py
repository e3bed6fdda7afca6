import re
from pathlib import Path

import yaml

from cluster import binaries
from cluster.binaries import Binaries, BinariesMissing, find_binaries
from cluster.kwokctl import kwokctl_env, render_kwokctl_config
from cluster.stages import STAGES_DIR, load_stages

REPO = Path(__file__).resolve().parents[3]


def test_kwokctl_config_uses_local_binaries_loopback_and_our_stages():
    docs = list(yaml.safe_load_all(render_kwokctl_config(Binaries(Path("/bins")), load_stages())))
    conf = docs[0]
    assert conf["kind"] == "KwokctlConfiguration"
    opts = conf["options"]
    assert opts["bindAddress"] == "127.0.0.1"
    assert opts["runtime"] == "binary"
    assert opts["disable"] == ["kube-scheduler"]
    assert opts["kubeVersion"] == binaries.K8S_VERSION
    for key, name in [("etcdBinary", "etcd"), ("kubeApiserverBinary", "kube-apiserver"),
                      ("kubeControllerManagerBinary", "kube-controller-manager"),
                      ("kwokControllerBinary", "kwok")]:
        assert opts[key] == f"/bins/{name}"
    kcm = [p for p in conf["componentsPatches"] if p["name"] == "kube-controller-manager"]
    assert kcm and {"key": "leader-elect", "value": "false"} in kcm[0]["extraArgs"]
    assert docs[1]["kind"] == "KwokConfiguration"
    assert docs[1]["options"]["nodePlayStageParallelism"] > 4
    # kwokctl writes every field of this document: an empty cidr would leave pods without IPs.
    assert docs[1]["options"]["cidr"] == "10.0.0.1/24"
    stages = {d["metadata"]["name"] for d in docs[2:]}
    assert stages == {"node-initialize", "node-heartbeat-with-lease", "pod-ready", "pod-complete",
                      "pod-failed", "pod-delete"}


def test_kwokctl_env_hides_the_users_kubeconfig(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", "/home/dev/.kube/prod")
    monkeypatch.setenv("KWOK_KUBE_VERSION", "v1.20.0")
    env = kwokctl_env(tmp_path)
    assert "KUBECONFIG" not in env
    assert "KWOK_KUBE_VERSION" not in env
    assert env["KWOK_WORKDIR"] == str(tmp_path)


def test_completion_and_failure_are_opt_in():
    """kwok's stock pod-complete would finish vcjob pods at once; ours needs a label."""
    for stage in load_stages():
        if stage["metadata"]["name"] in ("pod-complete", "pod-failed"):
            keys = [e["key"] for e in stage["spec"]["selector"]["matchExpressions"]]
            label = f'.metadata.labels["{stage["metadata"]["name"]}.stage.npu-emu.io"]'
            assert label in keys
            assert not any("ownerReferences" in k for k in keys)


def test_stage_files_are_named_after_their_stage():
    for path in STAGES_DIR.glob("*/*.yaml"):
        doc = yaml.safe_load(path.read_text())
        assert doc["metadata"]["name"] == path.stem
        assert doc["spec"]["resourceRef"]["kind"].lower() == path.parent.name


def test_versions_agree_with_the_build_script():
    script = (REPO / "ci" / "build-control-plane.sh").read_text()
    pins = [("K8S_VERSION", binaries.K8S_VERSION), ("ETCD_VERSION", binaries.ETCD_VERSION),
            ("KWOK_VERSION", binaries.KWOK_VERSION), ("VOLCANO_VERSION", binaries.VOLCANO_VERSION)]
    for var, value in pins:
        assert re.search(rf"^{var}={re.escape(value)}$", script, re.M), var
    for mod, version in [("k8s", f"k8s.io/kubernetes {binaries.K8S_VERSION}"),
                         ("etcd", f"go.etcd.io/etcd/server/v3 {binaries.ETCD_VERSION}"),
                         ("volcano", f"volcano.sh/volcano {binaries.VOLCANO_VERSION}")]:
        assert version in (REPO / "ci" / mod / "go.mod").read_text()


def test_missing_binaries_name_the_build_script(tmp_path, monkeypatch):
    monkeypatch.delenv("NPU_EMU_BIN_DIR", raising=False)
    (tmp_path / "etcd").write_text("#!/bin/sh\n")
    (tmp_path / "etcd").chmod(0o755)
    try:
        find_binaries(tmp_path)
    except BinariesMissing as e:
        msg = str(e)
    else:
        raise AssertionError("expected BinariesMissing")
    assert "ci/build-control-plane.sh" in msg
    assert "kube-apiserver" in msg and "vc-scheduler" in msg
    assert "etcd," not in msg  # etcd is present


def test_bin_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_EMU_BIN_DIR", str(tmp_path))
    try:
        find_binaries()
    except BinariesMissing as e:
        assert str(tmp_path) in str(e) and "NPU_EMU_BIN_DIR" in str(e)


def test_scheduler_conf():
    conf = yaml.safe_load((REPO / "fixtures" / "volcano" / "scheduler.conf").read_text())
    assert [a.strip() for a in conf["actions"].split(",")] == ["enqueue", "allocate", "backfill"]
    plugins = {p["name"]: p for tier in conf["tiers"] for p in tier["plugins"]}
    for name in ("gang", "predicates", "proportion", "nodeorder", "binpack"):
        assert name in plugins
    args = plugins["binpack"]["arguments"]
    assert args["binpack.resources"] == "huawei.com/Ascend910"
    assert args["binpack.resources.huawei.com/Ascend910"] > args["binpack.cpu"]


def test_kwokctl_ports_are_pinned():
    ports = {"kubeApiserverPort": 40001, "etcdPort": 40002, "etcdPeerPort": 40003,
             "kubeControllerManagerPort": 40004, "kwokControllerPort": 40005}
    docs = list(yaml.safe_load_all(render_kwokctl_config(Binaries(Path("/b")), load_stages(), ports)))
    for key, port in ports.items():
        assert docs[0]["options"][key] == port
