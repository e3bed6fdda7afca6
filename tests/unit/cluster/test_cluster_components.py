from pathlib import Path

from cluster.components import build_vc_controller_manager, build_vc_scheduler


def test_vc_scheduler_args():
    c = build_vc_scheduler(Path("/b/vc-scheduler"), kubeconfig=Path("/k"), scheduler_conf=Path("/s.conf"),
                           listen_port=1001, healthz_port=1002, dump_dir=Path("/d"))
    assert c.argv[0] == "/b/vc-scheduler"
    assert "--leader-elect=false" in c.args
    assert "--scheduler-conf=/s.conf" in c.args
    assert "--kubeconfig=/k" in c.args
    assert "--listen-address=127.0.0.1:1001" in c.args
    assert "--healthz-address=127.0.0.1:1002" in c.args
    assert c.ready_probe is not None and c.ready_probe.url == "http://127.0.0.1:1002/healthz"
    assert c.ports == {"listen": 1001, "healthz": 1002}


def test_vc_controller_manager_args():
    c = build_vc_controller_manager(Path("/b/vc-cm"), kubeconfig=Path("/k"), listen_port=7, healthz_port=8)
    assert "--leader-elect=false" in c.args
    assert "--listen-address=127.0.0.1:7" in c.args
    assert "--healthz-address=127.0.0.1:8" in c.args


def test_nothing_binds_beyond_loopback():
    comps = [
        build_vc_scheduler(Path("/x"), kubeconfig=Path("/k"), scheduler_conf=Path("/s"), listen_port=1,
                           healthz_port=2, dump_dir=Path("/d")),
        build_vc_controller_manager(Path("/y"), kubeconfig=Path("/k"), listen_port=3, healthz_port=4),
    ]
    for c in comps:
        for arg in c.args:
            if "address" in arg:
                assert "=127.0.0.1:" in arg, arg
