"""The AscendJob CRD: names, status subresource, and a schema the example jobs satisfy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from acjob_unit_helpers import FIXTURES

CRD = Path(__file__).resolve().parents[3] / "fixtures" / "crds" / "mindxdl.gitee.com_ascendjobs.yaml"


def crd() -> dict[str, Any]:
    return dict(yaml.safe_load(CRD.read_text()))


def test_names_and_version() -> None:
    doc = crd()
    assert doc["apiVersion"] == "apiextensions.k8s.io/v1" and doc["metadata"]["name"] == "ascendjobs.mindxdl.gitee.com"
    spec = doc["spec"]
    assert spec["group"] == "mindxdl.gitee.com" and spec["scope"] == "Namespaced"
    assert spec["names"] == {"kind": "AscendJob", "listKind": "AscendJobList", "plural": "ascendjobs",
                             "singular": "ascendjob", "shortNames": ["acjob"]}
    (version,) = spec["versions"]
    assert version["name"] == "v1" and version["served"] and version["storage"]
    assert version["subresources"] == {"status": {}}


def _check(schema: dict[str, Any], value: Any, path: str) -> None:
    """A small structural check: types, enums, required keys, unknown fields (what the apiserver prunes)."""
    if schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("x-kubernetes-int-or-string"):
        return
    kind = schema.get("type")
    if kind == "object":
        assert isinstance(value, dict), path
        for key in schema.get("required", []):
            assert key in value, f"{path}.{key} is required"
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if props is not None and key in props:
                _check(props[key], item, f"{path}.{key}")
            elif extra is not None:
                _check(extra, item, f"{path}.{key}")
            elif props is not None and path != "":
                raise AssertionError(f"{path}.{key} is not in the schema (it would be pruned)")
    elif kind == "string":
        assert isinstance(value, str), path
    elif kind == "integer":
        assert isinstance(value, int), path
    if "enum" in schema:
        assert value in schema["enum"], f"{path}: {value!r} not in {schema['enum']}"


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.yaml")), ids=lambda p: p.stem)
def test_example_jobs_fit_the_schema(path: Path) -> None:
    schema = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    doc = yaml.safe_load(path.read_text())
    _check(schema, {k: v for k, v in doc.items() if k != "metadata"}, "")


def test_status_schema_is_kubeflow_job_status() -> None:
    status = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert set(status) == {"conditions", "replicaStatuses", "startTime", "completionTime", "lastReconcileTime"}
    assert set(status["conditions"]["items"]["properties"]) == {
        "type", "status", "reason", "message", "lastUpdateTime", "lastTransitionTime"}
