"""The one chip allocator: kubelet mode (GetPreferredAllocation), fleet mode and tests all use it.

Rules follow ascend-for-volcano (shared/reference/ascend-stack.md §5.1, §5.3):

- ``rings`` (910A, two HCCS rings of 4): counts 1, 2, 4 and 8 only. 8 takes the whole node and needs every
  chip free. Otherwise the ring is chosen by its free-chip count in the preference order
  1 chip: 1 > 3 > 2 > 4; 2 chips: 2 > 4 > 3; 4 chips: 4 (ties: lower ring index), and the first N free
  chips of that ring are taken.
- ``full-mesh`` (910B): the first N free chips, sorted.
- ``superpod`` (A3): an even count takes whole SIO pairs (both chips free), lowest pairs first; a single
  chip prefers a chip whose partner is already taken, so whole pairs stay free; other odd counts are
  invalid.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .model import Topology

__all__ = ["RING_PREFERENCE", "AllocationError", "choose", "valid_counts"]

RING_PREFERENCE: dict[int, tuple[int, ...]] = {1: (1, 3, 2, 4), 2: (2, 4, 3), 4: (4,)}


class AllocationError(ValueError):
    """The request cannot be met under the topology's rules."""


def valid_counts(topology: Topology, chips: Sequence[int]) -> frozenset[int]:
    n = len(chips)
    if topology.kind == "rings":
        return frozenset(c for c in (*RING_PREFERENCE, n) if c <= n)
    if topology.kind == "superpod":
        return frozenset({1, *range(2, n + 1, 2)})
    return frozenset(range(1, n + 1))


def choose(
    topology: Topology,
    chips: Sequence[int],
    free: Iterable[int],
    count: int,
    must_include: Iterable[int] = (),
) -> list[int]:
    """Pick `count` chips (sorted phy ids) out of `free` for one pod on a node with `chips`.

    Raises AllocationError naming the reason when the rules allow no choice.
    """
    all_chips = sorted(set(chips))
    free_set = set(free) & set(all_chips)
    must = sorted(set(must_include))
    if count < 1:
        raise AllocationError(f"chip count must be at least 1, got {count}")
    if count not in valid_counts(topology, all_chips):
        allowed = ", ".join(map(str, sorted(valid_counts(topology, all_chips))))
        raise AllocationError(f"{count} chips is not a valid request on a {topology.kind} node (valid: {allowed})")
    missing = [c for c in must if c not in free_set]
    if missing:
        raise AllocationError(f"required chips are not free: {missing}")
    if len(must) > count:
        raise AllocationError(f"{len(must)} required chips exceed the request of {count}")
    if len(free_set) < count:
        raise AllocationError(f"{count} chips requested, {len(free_set)} free")
    if topology.kind == "rings":
        return _choose_rings(topology, all_chips, free_set, count, must)
    if topology.kind == "superpod":
        return _choose_sio(topology, all_chips, free_set, count, must)
    return sorted(must + [c for c in sorted(free_set) if c not in must][: count - len(must)])


def _choose_rings(topology: Topology, all_chips: list[int], free: set[int], count: int, must: list[int]) -> list[int]:
    if count == len(all_chips):
        if free != set(all_chips):
            raise AllocationError(f"a request for {count} chips needs every chip of the node free")
        return all_chips
    rings = [sorted(r) for r in topology.rings] or [all_chips]
    candidates: list[tuple[int, int, list[int]]] = []  # (preference rank, ring index, free chips)
    preference = RING_PREFERENCE.get(count, (count,))
    for index, ring in enumerate(rings):
        ring_free = [c for c in ring if c in free]
        if len(ring_free) < count or not set(must) <= set(ring_free):
            continue
        if len(ring_free) not in preference:
            continue
        candidates.append((preference.index(len(ring_free)), index, ring_free))
    if not candidates:
        raise AllocationError(f"no HCCS ring has {count} free chips in a preferred state")
    _, _, ring_free = min(candidates, key=lambda t: (t[0], t[1]))
    rest = [c for c in ring_free if c not in must]
    return sorted(must + rest[: count - len(must)])


def _pairs(topology: Topology, all_chips: list[int]) -> list[tuple[int, ...]]:
    if topology.sio_pairs:
        return [tuple(sorted(p)) for p in topology.sio_pairs]
    return [tuple(all_chips[i : i + 2]) for i in range(0, len(all_chips), 2)]


def _choose_sio(topology: Topology, all_chips: list[int], free: set[int], count: int, must: list[int]) -> list[int]:
    pairs = sorted(_pairs(topology, all_chips))
    if count == 1:
        if must:
            return must
        half = [c for p in pairs if sum(c in free for c in p) == 1 for c in p if c in free]
        return [min(half)] if half else [min(free)]
    whole = [p for p in pairs if all(c in free for c in p)]
    needed = [p for p in whole if set(p) & set(must)]
    if any(not any(c in p for p in needed) for c in must) or len(needed) > count // 2:
        raise AllocationError("required chips must lie in whole free SIO pairs")
    chosen = needed + [p for p in whole if p not in needed]
    if len(chosen) < count // 2:
        raise AllocationError(f"{count} chips need {count // 2} whole free SIO pairs, {len(whole)} free")
    return sorted(c for p in chosen[: count // 2] for c in p)
