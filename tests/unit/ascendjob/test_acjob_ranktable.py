"""hccl.json shapes (ascend-stack.md §7.4): golden strings for 1.0 and 1.2, and when it stays initializing."""

from __future__ import annotations

from acjob_unit_helpers import device, job, pod, replica

from cluster.ascendjob import JobView, build_ranktable

GOLDEN_1_0 = (
    '{"status":"completed","server_list":['
    '{"device":[{"device_id":"0","device_ip":"10.64.0.1","rank_id":"0"},'
    '{"device_id":"1","device_ip":"10.65.0.1","rank_id":"1"}],'
    '"server_id":"uid-m","host_ip":"172.16.0.1","container_ip":"10.0.0.1"},'
    '{"device":[{"device_id":"4","device_ip":"10.68.0.2","rank_id":"2"},'
    '{"device_id":"5","device_ip":"10.69.0.2","rank_id":"3"}],'
    '"server_id":"uid-w","host_ip":"172.16.0.2","container_ip":"10.0.0.2"}],'
    '"server_count":"2","version":"1.0"}'
)

GOLDEN_1_2 = (
    '{"status":"completed","server_list":['
    '{"device":[{"device_id":"0","device_ip":"10.64.0.1","super_device_id":"37748736","rank_id":"0"},'
    '{"device_id":"1","device_ip":"10.65.0.1","super_device_id":"37748737","rank_id":"1"}],'
    '"server_id":"uid-a","host_ip":"172.16.0.1","container_ip":"10.0.0.1"},'
    '{"device":[{"device_id":"0","device_ip":"10.64.0.2","super_device_id":"37748752","rank_id":"2"},'
    '{"device_id":"1","device_ip":"10.65.0.2","super_device_id":"37748753","rank_id":"3"}],'
    '"server_id":"uid-b","host_ip":"172.16.0.2","container_ip":"10.0.0.2"}],'
    '"server_count":"2","version":"1.2",'
    '"super_pod_list":[{"super_pod_id":"0","server_list":[{"server_id":"uid-a"},{"server_id":"uid-b"}]}]}'
)


def two_pod_job(**kwargs) -> JobView:
    return JobView(job(replicas={"Master": replica(2), "Worker": replica(2)}, **kwargs))


def test_golden_1_0() -> None:
    pods = [  # listed worker first: the table is ordered by rank
        pod("j-worker-0", "worker", 1, [device(4, "10.68.0.2"), device(5, "10.69.0.2")], uid="uid-w",
            ip="10.0.0.2", host_ip="172.16.0.2"),
        pod("j-master-0", "master", 0, [device(0, "10.64.0.1"), device(1, "10.65.0.1")], uid="uid-m",
            ip="10.0.0.1", host_ip="172.16.0.1"),
    ]
    table = build_ranktable(two_pod_job(), pods)
    assert table.completed and table.to_json() == GOLDEN_1_0
    assert table.pod_uids == {"uid-m", "uid-w"}


def test_golden_1_2_for_a3() -> None:
    view = JobView(job(replicas={"Worker": replica(2, 2, nodeSelector={"accelerator-type": "module-a3-16-super-pod"})}))
    pods = [
        pod("j-worker-1", "worker", 1, [device(0, "10.64.0.2", 37748752), device(1, "10.65.0.2", 37748753)],
            uid="uid-b", ip="10.0.0.2", host_ip="172.16.0.2"),
        pod("j-worker-0", "worker", 0, [device(0, "10.64.0.1", 37748736), device(1, "10.65.0.1", 37748737)],
            uid="uid-a", ip="10.0.0.1", host_ip="172.16.0.1"),
    ]
    assert build_ranktable(view, pods).to_json() == GOLDEN_1_2


def test_sp_block_splits_the_super_pod_list() -> None:
    view = JobView(job(replicas={"Worker": replica(16, 4)}, annotations={"sp-block": "32"}))
    pods = [pod(f"j-worker-{i}", "worker", i, [device(c, f"10.{64 + c}.0.{i}", 1000 * i + c) for c in range(16)],
                ip=f"10.0.0.{i}") for i in range(4)]
    table = build_ranktable(view, pods)
    assert [(sp["super_pod_id"], [s["server_id"] for s in sp["server_list"]]) for sp in table.data["super_pod_list"]] \
        == [("0", ["uid-j-worker-0", "uid-j-worker-1"]), ("1", ["uid-j-worker-2", "uid-j-worker-3"])]
    assert table.data["server_list"][3]["device"][15]["rank_id"] == "63"


def test_initializing_until_every_pod_holds_its_chips() -> None:
    view = two_pod_job()
    pods = [pod("j-master-0", "master", 0, [device(0, "10.64.0.1"), device(1, "10.65.0.1")]),
            pod("j-worker-0", "worker", 1, None, chips=2)]
    table = build_ranktable(view, pods)
    assert table.to_json() == '{"status":"initializing","version":"1.0"}'
    assert table.problem == "1/2 pods hold their chips" and not table.pod_uids
    a3 = JobView(job(replicas={"Worker": replica(16, 1)}, annotations={"sp-block": "16"}))
    assert build_ranktable(a3, []).to_json() == '{"status":"initializing","version":"1.2","super_pod_list":[]}'


def test_pods_being_deleted_do_not_count() -> None:
    view = two_pod_job()
    pods = [pod("j-master-0", "master", 0, [device(0, "a"), device(1, "b")]),
            pod("j-worker-0", "worker", 1, [device(2, "c"), device(3, "d")])]
    pods[1]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert not build_ranktable(view, pods).completed


def test_a_pod_without_an_ip_or_a_device_without_an_ip_keeps_it_initializing() -> None:
    view = two_pod_job()
    no_ip = [pod("j-master-0", "master", 0, [device(0, "a"), device(1, "b")]),
             pod("j-worker-0", "worker", 1, [device(2, "c"), device(3, "d")], ip="")]
    table = build_ranktable(view, no_ip)
    assert not table.completed and "has no IP yet" in table.problem
    bad_device = [pod("j-master-0", "master", 0, [device(0, "-1"), device(1, "b")]),
                  pod("j-worker-0", "worker", 1, [device(2, "c"), device(3, "d")])]
    table = build_ranktable(view, bad_device)
    assert not table.completed and "no IP (-1)" in table.problem


def test_pods_without_npus_count_as_allocated_but_are_not_servers() -> None:
    view = JobView(job("mindspore", {"Scheduler": replica(0), "Worker": replica(2, 1)}))
    pods = [pod("j-scheduler-0", "scheduler", 0, None, chips=0),
            pod("j-worker-0", "worker", 0, [device(0, "a"), device(1, "b")])]
    table = build_ranktable(view, pods)
    assert table.completed and table.data["server_count"] == "1"
