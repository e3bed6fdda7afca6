from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deviceplugin.allocator import RING_PREFERENCE, AllocationError, choose, valid_counts
from deviceplugin.model import Topology

RINGS = Topology("rings", ((0, 1, 2, 3), (4, 5, 6, 7)))
MESH = Topology("full-mesh", ((0, 1, 2, 3, 4, 5, 6, 7),))
A3 = Topology("superpod", (tuple(range(16)),), tuple((i, i + 1) for i in range(0, 16, 2)))

free8 = st.sets(st.integers(0, 7))
free16 = st.sets(st.integers(0, 15))


@pytest.mark.parametrize(
    ("free", "count", "expected"),
    [
        (range(8), 1, [0]),
        ([0, 1, 2, 4], 1, [4]),  # ring 1 has 1 free: preferred over 3 free
        ([0, 1, 4, 5, 6], 1, [4]),  # 3 free > 2 free
        ([0, 1, 2, 3, 4, 5], 1, [4]),  # 2 free > 4 free
        ([0, 1, 4, 5, 6], 2, [0, 1]),  # 2 free > 3 free
        ([0, 1, 2, 3, 4, 5, 6], 2, [0, 1]),  # 4 free > 3 free
        ([0, 1, 2, 4, 5, 6, 7], 4, [4, 5, 6, 7]),
        (range(8), 8, list(range(8))),
    ],
)
def test_910a_ring_preference(free: list[int], count: int, expected: list[int]) -> None:
    assert choose(RINGS, range(8), free, count) == expected


@pytest.mark.parametrize("count", [3, 5, 6, 7])
def test_910a_invalid_counts(count: int) -> None:
    with pytest.raises(AllocationError, match="not a valid request"):
        choose(RINGS, range(8), range(8), count)


def test_910a_eight_needs_all_free() -> None:
    with pytest.raises(AllocationError, match="7 free"):
        choose(RINGS, range(8), range(1, 8), 8)


def test_910a_two_across_rings_refused() -> None:
    with pytest.raises(AllocationError):
        choose(RINGS, range(8), [0, 4], 2)


def test_910b_first_n_sorted() -> None:
    assert choose(MESH, range(8), [7, 3, 5, 1], 3) == [1, 3, 5]


def test_a3_whole_pairs_and_singles() -> None:
    assert choose(A3, range(16), [1, 2, 3, 4, 5], 4) == [2, 3, 4, 5]
    assert choose(A3, range(16), [1, 2, 3, 4, 5], 1) == [1]  # keeps whole pairs free
    with pytest.raises(AllocationError, match="not a valid request"):
        choose(A3, range(16), range(16), 3)
    with pytest.raises(AllocationError, match="SIO pairs"):
        choose(A3, range(16), [0, 2, 4, 6], 2)


def test_must_include() -> None:
    assert choose(MESH, range(8), range(8), 2, must_include=[6]) == [0, 6]
    assert choose(RINGS, range(8), range(8), 2, must_include=[5]) == [4, 5]
    assert choose(A3, range(16), range(16), 4, must_include=[7]) == [0, 1, 6, 7]
    with pytest.raises(AllocationError, match="not free"):
        choose(MESH, range(8), [0, 1], 1, must_include=[2])


@settings(deadline=None)
@given(free=free8, count=st.sampled_from([1, 2, 4, 8]))
def test_rings_properties(free: set[int], count: int) -> None:
    try:
        got = choose(RINGS, range(8), free, count)
    except AllocationError:
        if count == 8:
            assert free != set(range(8))
        else:  # no ring has enough free chips in a preferred state
            for ring in RINGS.rings:
                n = len([c for c in ring if c in free])
                assert n < count or n not in RING_PREFERENCE[count]
        return
    assert len(got) == count == len(set(got))
    assert set(got) <= free
    assert got == sorted(got)
    if count < 8:
        ring = next(r for r in RINGS.rings if got[0] in r)
        assert set(got) <= set(ring)
        ring_free = [c for c in ring if c in free]
        assert got == ring_free[:count]  # first N of the ring
        rank = RING_PREFERENCE[count].index(len(ring_free))
        for other in RINGS.rings:  # no ring in a strictly better state
            other_free = len([c for c in other if c in free])
            if other is not ring and other_free in RING_PREFERENCE[count]:
                assert RING_PREFERENCE[count].index(other_free) >= rank


@settings(deadline=None)
@given(free=free8, count=st.integers(1, 8))
def test_mesh_properties(free: set[int], count: int) -> None:
    if len(free) < count:
        with pytest.raises(AllocationError):
            choose(MESH, range(8), free, count)
        return
    assert choose(MESH, range(8), free, count) == sorted(free)[:count]


@settings(deadline=None)
@given(free=free16, count=st.sampled_from(sorted(valid_counts(A3, list(range(16))))))
def test_a3_properties(free: set[int], count: int) -> None:
    try:
        got = choose(A3, range(16), free, count)
    except AllocationError:
        whole = [p for p in A3.sio_pairs if set(p) <= free]
        assert (count == 1 and not free) or (count > 1 and len(whole) < count // 2) or len(free) < count
        return
    assert len(got) == count and set(got) <= free
    if count % 2 == 0:
        for c in got:  # whole pairs only
            assert (c ^ 1) in got
    else:
        partner_taken = [c for c in free if (c ^ 1) not in free]
        if partner_taken:
            assert got[0] in partner_taken


@settings(deadline=None)
@given(free=free8, count=st.integers(-3, 10), must=st.sets(st.integers(0, 7), max_size=3))
def test_never_returns_an_invalid_choice(free: set[int], count: int, must: set[int]) -> None:
    for topo in (RINGS, MESH):
        try:
            got = choose(topo, range(8), free, count, must_include=must)
        except AllocationError:
            continue
        assert len(got) == count and set(got) <= free and must <= set(got)
