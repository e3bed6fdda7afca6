"""The controller's view of the apiserver: plain-dict reads and writes and raw watches.

Everything goes through the kubernetes client's ApiClient without model (de)serialisation: the typed
models cost more than the requests at a thousand pods.
"""

from __future__ import annotations

import builtins
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from . import constants as k

__all__ = ["Kube", "NotFound"]

log = logging.getLogger(__name__)

JOBS = f"/apis/{k.GROUP}/{k.VERSION}"
PODGROUPS = f"/apis/{k.PODGROUP_GROUP}/{k.PODGROUP_VERSION}"
POD_SELECTOR = f"{k.LABEL_OPERATOR_NAME}={k.OPERATOR_NAME}"


class NotFound(LookupError):
    pass


class Kube:
    def __init__(self, api_client: ApiClient) -> None:
        self.client = api_client

    # plumbing ---------------------------------------------------------------------------------------
    def _request(self, method: str, path: str, *, body: Any = None, query: list[tuple[str, Any]] | None = None,
                 content_type: str = "application/json", timeout: Any = 30.0, stream: bool = False) -> Any:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        method, url, headers, _, _ = self.client.param_serialize(
            method, path, query_params=query or [], header_params=headers, auth_settings=["BearerToken"])
        payload = json.dumps(body).encode() if body is not None else None
        resp = self.client.rest_client.pool_manager.request(method, url, headers=headers, body=payload,
                                                            preload_content=not stream, timeout=timeout)
        if not 200 <= resp.status <= 299:
            data = resp.data if not stream else resp.read()
            if stream:
                resp.release_conn()
            if resp.status == 404:
                raise NotFound(path)
            e = ApiException(status=resp.status, reason=resp.reason)
            e.body = data.decode(errors="replace") if data else None
            raise e
        return resp

    def call(self, method: str, path: str, *, body: Any = None, query: list[tuple[str, Any]] | None = None,
             content_type: str = "application/json", timeout: float = 30.0) -> Any:
        resp = self._request(method, path, body=body, query=query, content_type=content_type, timeout=timeout)
        return json.loads(resp.data) if resp.data else None

    def get(self, path: str) -> dict[str, Any] | None:
        try:
            return dict(self.call("GET", path))
        except NotFound:
            return None

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """POST; None when it already exists (409)."""
        try:
            return dict(self.call("POST", path, body=body))
        except ApiException as e:
            if e.status == 409:
                return None
            raise

    def delete(self, path: str, *, grace_s: int | None = None, propagation: str | None = None) -> bool:
        body: dict[str, Any] = {}
        if grace_s is not None:
            body["gracePeriodSeconds"] = grace_s
        if propagation:
            body["propagationPolicy"] = propagation
        try:
            self.call("DELETE", path, body=body or None)
            return True
        except NotFound:
            return False

    def list(self, path: str, selector: str | None = None) -> tuple[builtins.list[dict[str, Any]], str]:
        items: builtins.list[dict[str, Any]] = []
        cont = ""
        while True:
            query: list[tuple[str, Any]] = [("limit", 1000)]
            if selector:
                query.append(("labelSelector", selector))
            if cont:
                query.append(("continue", cont))
            body = self.call("GET", path, query=query)
            items.extend(body.get("items") or [])
            meta = body.get("metadata") or {}
            cont = meta.get("continue") or ""
            if not cont:
                return items, str(meta.get("resourceVersion") or "")

    def watch(self, path: str, resource_version: str, *, selector: str | None = None,
              timeout_s: int = 30) -> Iterator[dict[str, Any]]:
        """Watch events as dicts ({"type", "object"}) until the server ends the watch."""
        query: list[tuple[str, Any]] = [("watch", "true"), ("resourceVersion", resource_version),
                                        ("allowWatchBookmarks", "true"), ("timeoutSeconds", timeout_s)]
        if selector:
            query.append(("labelSelector", selector))
        import urllib3

        resp = self._request("GET", path, query=query, stream=True,
                             timeout=urllib3.Timeout(connect=10, read=timeout_s + 15))
        try:
            buffer = b""
            for chunk in resp.stream(65536, decode_content=False):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        yield json.loads(line)
        finally:
            resp.release_conn()

    # objects ----------------------------------------------------------------------------------------
    @staticmethod
    def job_path(ns: str, name: str = "") -> str:
        base = f"{JOBS}/namespaces/{ns}/{k.PLURAL}"
        return f"{base}/{name}" if name else base

    @staticmethod
    def podgroup_path(ns: str, name: str = "") -> str:
        base = f"{PODGROUPS}/namespaces/{ns}/{k.PODGROUP_PLURAL}"
        return f"{base}/{name}" if name else base

    @staticmethod
    def core_path(ns: str, plural: str, name: str = "") -> str:
        base = f"/api/v1/namespaces/{ns}/{plural}"
        return f"{base}/{name}" if name else base

    def job_pods(self, ns: str, job: str) -> builtins.list[dict[str, Any]]:
        selector = f"{POD_SELECTOR},{k.LABEL_JOB_NAME}={job}"
        return self.list(self.core_path(ns, "pods"), selector)[0]

    def patch_job_status(self, ns: str, name: str, status: dict[str, Any]) -> None:
        self.call("PATCH", self.job_path(ns, name) + "/status", body={"status": status},
                  content_type="application/merge-patch+json")

    def clusterip(self, ns: str, name: str) -> str:
        svc = self.get(self.core_path(ns, "services", name))
        return str(((svc or {}).get("spec") or {}).get("clusterIP") or "")

    def event(self, job: dict[str, Any], etype: str, reason: str, message: str) -> None:
        """A core/v1 Event on the job, as the real operator's recorder writes (best effort)."""
        meta = job.get("metadata") or {}
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        body = {
            "metadata": {"generateName": f"{meta.get('name')}.", "namespace": meta.get("namespace")},
            "involvedObject": {"apiVersion": k.API_VERSION, "kind": k.KIND, "name": meta.get("name"),
                               "namespace": meta.get("namespace"), "uid": meta.get("uid")},
            "reason": reason, "message": message, "type": etype, "count": 1,
            "firstTimestamp": now, "lastTimestamp": now,
            "source": {"component": k.OPERATOR_NAME}, "reportingComponent": k.OPERATOR_NAME,
        }
        try:
            self.call("POST", self.core_path(str(meta.get("namespace")), "events"), body=body)
        except ApiException as e:
            log.debug("event %s on %s not written: %s", reason, meta.get("name"), e.reason)
