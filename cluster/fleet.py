"""Create, wait for and delete many kwok Nodes quickly: parallel API calls, optional progress bar."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .nodes import ASCEND_RESOURCE, build_node
from .nodes import NodeSource as NodeSource

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

__all__ = ["FleetResult", "count_ready", "create_fleet", "delete_nodes", "wait_nodes_ready"]

Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class FleetResult:
    created: int
    existing: int
    seconds: float


def _core(api_client: ApiClient) -> Any:
    from kubernetes.client import CoreV1Api
    return CoreV1Api(api_client)


def create_fleet(api_client: ApiClient, nodes: Sequence[NodeSource], cluster: str, *, workers: int = 16,
                 extra_labels: dict[str, str] | None = None, advance: Progress | None = None,
                 ready: bool = False) -> FleetResult:
    """POST one Node per inventory node (status included: kwok keeps capacity/allocatable)."""
    from kubernetes.client.exceptions import ApiException

    core = _core(api_client)
    start = time.monotonic()
    created = existing = 0

    def create(node: NodeSource) -> bool:
        try:
            # No response decoding: it costs more than the request at thousands of nodes.
            body = build_node(node, cluster, ready=ready)
            if extra_labels:
                body["metadata"]["labels"].update(extra_labels)
            _ = core.create_node(body, _preload_content=False).data  # read it: frees the connection
            return True
        except ApiException as e:
            if e.status == 409:
                return False
            raise RuntimeError(f"creating node {node.name}: {e.status} {e.reason}: {e.body}") from e

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="npu-emu-nodes") as pool:
        futures = [pool.submit(create, n) for n in nodes]
        try:
            for f in as_completed(futures):
                if f.result():
                    created += 1
                else:
                    existing += 1
                if advance:
                    advance(1)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return FleetResult(created, existing, time.monotonic() - start)


NOT_READY_TAINT = "node.kubernetes.io/not-ready"


def _is_ready(node: Any) -> bool:
    """Ready, and schedulable: the node controller has lifted the not-ready taint that admission puts
    on every new node (until then Volcano's predicates skip it)."""
    if any(t.get("key") == NOT_READY_TAINT for t in (node.get("spec", {}).get("taints") or [])):
        return False
    for cond in (node.get("status", {}).get("conditions") or []):
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def _list_nodes(api_client: ApiClient, label_selector: str, names: str | None = None) -> list[dict[str, Any]]:
    """List nodes as plain dicts, page by page (raw JSON: the typed models are slow at 10k nodes)."""
    import json

    core = _core(api_client)
    items: list[dict[str, Any]] = []
    cont = None
    while True:
        resp = core.list_node(label_selector=label_selector, limit=2000, _continue=cont,
                              _preload_content=False)
        body = json.loads(resp.data)
        wanted = set(names.split(",")) if names else None
        items.extend(i for i in body.get("items", []) if wanted is None or i["metadata"]["name"] in wanted)
        cont = body.get("metadata", {}).get("continue")
        if not cont:
            return items


def count_ready(api_client: ApiClient, label_selector: str, names: str | None = None) -> tuple[int, int, int]:
    """(nodes, ready nodes, total huawei.com/Ascend910 allocatable on ready nodes)."""
    nodes = _list_nodes(api_client, label_selector, names)
    ready = [n for n in nodes if _is_ready(n)]
    chips = sum(int(n["status"].get("allocatable", {}).get(ASCEND_RESOURCE, 0)) for n in ready)
    return len(nodes), len(ready), chips


def wait_nodes_ready(api_client: ApiClient, label_selector: str, expected: int, *, timeout_s: float = 300.0,
                     names: str | None = None, update: Callable[[int], None] | None = None) -> float:
    """Wait until `expected` nodes matching the selector are Ready; return the seconds waited."""
    start = time.monotonic()
    deadline = start + timeout_s
    while True:
        total, ready, _ = count_ready(api_client, label_selector, names)
        if update:
            update(ready)
        if ready >= expected:
            return time.monotonic() - start
        if time.monotonic() > deadline:
            raise TimeoutError(f"{ready}/{expected} nodes Ready ({total} exist) after {timeout_s:.0f}s "
                               f"(selector {label_selector!r}); is kwok-controller running?")
        time.sleep(0.5 if expected < 500 else 2.0)


def delete_nodes(api_client: ApiClient, names: Iterable[str], *, workers: int = 16) -> int:
    from kubernetes.client.exceptions import ApiException

    core = _core(api_client)

    def delete(name: str) -> bool:
        try:
            _ = core.delete_node(name, _preload_content=False).data
            return True
        except ApiException as e:
            if e.status == 404:
                return False
            raise

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="npu-emu-nodes") as pool:
        return sum(pool.map(delete, names))
