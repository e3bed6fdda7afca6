"""JobView: the operator's defaults and validation."""

from __future__ import annotations

import pytest
import yaml
from acjob_unit_helpers import FIXTURES, example, job, replica

from cluster.ascendjob import InvalidJob, JobView

SHARED_EXAMPLE = FIXTURES.parents[2] / "shared" / "reference" / "acjob-pytorch-example.yaml"


def test_reference_example_view() -> None:
    view = JobView(example())
    assert view.key == "acjob/default-test-pytorch" and view.framework == "pytorch"
    assert [r.rtype for r in view.ordered()] == ["Master", "Worker"]
    assert view.total_replicas == 3 and view.min_available == 2 and view.queue == "default"
    assert view.success_policy == "AllWorkers" and view.clean_pod_policy == "None"
    assert view.non_worker_mounts_chips and view.npu_per_pod == 2 and view.npu_replicas == 3
    assert [view.rank("Master", 0), view.rank("Worker", 0), view.rank("Worker", 1)] == [0, 1, 2]
    assert view.has_ranktable_volume() and view.ranktable_version() == "1.0"
    view.validate()


@pytest.mark.skipif(not SHARED_EXAMPLE.exists(), reason="shared/reference not beside the repository")
def test_fixture_copy_is_the_reference_example_unchanged() -> None:
    assert (FIXTURES / "acjob-pytorch-example.yaml").read_bytes() == SHARED_EXAMPLE.read_bytes()


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_job_is_valid(path) -> None:
    doc = yaml.safe_load(path.read_text())
    doc["metadata"]["uid"] = "u"
    JobView(doc).validate()


def test_defaults() -> None:
    raw = job(replicas={"master": {"template": replica(8)["template"]}, "WORKER": replica(8, 2)})
    view = JobView(raw)
    assert set(view.replicas) == {"Master", "Worker"}  # camel case, as the real defaulting
    master = view.replicas["Master"]
    assert master.replicas == 1 and master.restart_policy == "Never" and master.port() == 2222
    assert view.replicas["Worker"].port() is None
    assert "ports" not in raw["spec"]["replicaSpecs"]["master"]["template"]["spec"]["containers"][0]  # input untouched
    assert not JobView(job(replicas={"Master": replica(0), "Worker": replica(8, 2)})).non_worker_mounts_chips


def test_rank_without_a_chip_mounting_master() -> None:
    view = JobView(job("mindspore", {"Scheduler": replica(0), "Worker": replica(8, 2)}))
    assert [view.rank("Worker", i) for i in range(2)] == [0, 1] and view.npu_replicas == 2


@pytest.mark.parametrize(("raw", "message"), [
    (job(labels={"framework": "jax"}), "framework label is jax"),
    (job(replicas={}), "replicaSpecs is empty"),
    (job(replicas={"PS": replica(8)}), "replicaType is PS"),
    (job(replicas={"Master": {"template": {"spec": {"containers": [{"name": "main"}]}}}}), "no container named ascend"),
    (job("mindspore", {"Master": replica(8), "Worker": replica(8)}), "leader replica type is Scheduler"),
    (job(replicas={"Master": replica(8, 2)}), "Master.replicas must be 1"),
    (job(replicas={"Master": replica(0), "Worker": replica(0)}), "does not request NPUs"),
    (job(successPolicy="Most"), "success policy is invalid"),
    (job(runPolicy={"schedulingPolicy": {"minAvailable": 9}}), "minAvailable 9 is larger"),
])
def test_invalid_jobs(raw, message) -> None:
    with pytest.raises(InvalidJob, match=message):
        JobView(raw).validate()


@pytest.mark.parametrize(("annotations", "selector", "version"), [
    ({}, {"accelerator-type": "module-910b-8"}, "1.0"),
    ({}, {"accelerator-type": "module-a3-16-super-pod"}, "1.2"),
    ({}, {"accelerator-type": "module-a3-8-super-pod"}, "1.2"),
    ({"sp-block": "32"}, {}, "1.2"),
    ({"huawei.com/schedule_policy": "chip2-node16-sp"}, {}, "1.2"),
])
def test_ranktable_version(annotations, selector, version) -> None:
    view = JobView(job(replicas={"Worker": replica(16, 2, nodeSelector=selector)}, annotations=annotations))
    assert view.ranktable_version() == version
