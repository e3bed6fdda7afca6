"""A reachable Kubernetes cluster, known by its kubeconfig: the part of a cluster that tests use.

ControlPlane (which starts one) and an existing cluster that pytest is pointed at are both this.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

    from emulator.inventory import Inventory

    from .fleet import FleetResult, NodeSource

__all__ = ["KubeCluster"]


class KubeCluster:
    """`name` labels the nodes npu-emu creates (npu-emu.io/cluster=<name>); `kubeconfig` reaches it."""

    def __init__(self, name: str, kubeconfig: Path) -> None:
        self.name = name
        self.kubeconfig = Path(kubeconfig)
        self._api_client: ApiClient | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, kubeconfig={str(self.kubeconfig)!r})"

    @property
    def label_selector(self) -> str:
        return f"npu-emu.io/cluster={self.name}"

    def api_client(self) -> ApiClient:
        """A kubernetes ApiClient for this cluster (shared; thread-safe for requests)."""
        if self._api_client is None:
            from kubernetes.config import new_client_from_config

            if not self.kubeconfig.exists():
                raise FileNotFoundError(f"kubeconfig {self.kubeconfig} does not exist")
            client = new_client_from_config(config_file=str(self.kubeconfig))
            # Enough pooled connections for the parallel node creation.
            client.rest_client.pool_manager.connection_pool_kw["maxsize"] = 32
            self._api_client = client
        return self._api_client

    def close(self) -> None:
        if self._api_client is not None:
            try:
                self._api_client.close()
            finally:
                self._api_client = None

    def count_nodes(self, label_selector: str | None = None) -> tuple[int, int, int]:
        """(nodes, Ready nodes, huawei.com/Ascend910 allocatable on Ready nodes) matching the selector
        (default: the nodes npu-emu created for this cluster; "" for every node)."""
        from .fleet import count_ready

        selector = self.label_selector if label_selector is None else label_selector
        return count_ready(self.api_client(), selector)

    def add_nodes(self, nodes: Inventory | list[NodeSource], *, wait: bool = True, workers: int = 16,
                  progress: bool = False, timeout_s: float = 600.0,
                  extra_labels: dict[str, str] | None = None, born_ready: bool = False) -> FleetResult:
        """Create one kwok Node per inventory node and (by default) wait until they are all Ready.

        born_ready=True creates the nodes with Ready conditions instead of leaving that to kwok's
        node-initialize Stage (experimental; faster at thousands of nodes, see docs/control-plane.md).
        """
        from .fleet import count_ready, create_fleet, wait_nodes_ready

        items: list[Any] = list(nodes.nodes.values()) if hasattr(nodes, "nodes") else list(nodes)
        client = self.api_client()
        names = ",".join(n.name for n in items) if len(items) <= 50 else None
        # Wait on exactly these nodes when they are few, else on everything this cluster labelled.
        selector = self.label_selector
        if extra_labels:
            selector += "," + ",".join(f"{k}={v}" for k, v in extra_labels.items())
        if progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn()) as bar:
                created = bar.add_task("creating nodes", total=len(items))
                result = create_fleet(client, items, self.name, workers=workers, extra_labels=extra_labels,
                                      advance=lambda n: bar.advance(created, n), ready=born_ready)
                if wait:
                    ready = bar.add_task("nodes Ready   ", total=len(items))
                    expected = count_ready(client, selector, names)[0]
                    wait_nodes_ready(client, selector, expected, timeout_s=timeout_s, names=names,
                                     update=lambda n: bar.update(ready, completed=min(n, len(items))))
        else:
            result = create_fleet(client, items, self.name, workers=workers, extra_labels=extra_labels,
                                  ready=born_ready)
            if wait:
                expected = count_ready(client, selector, names)[0]
                wait_nodes_ready(client, selector, expected, timeout_s=timeout_s, names=names)
        return result

    def delete_nodes(self, names: list[str]) -> int:
        from .fleet import delete_nodes

        return delete_nodes(self.api_client(), names)
