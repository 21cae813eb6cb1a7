"""generator.memo: answers kept per object identity, never across objects."""

from __future__ import annotations

from generator.memo import identity_memo


class _Thing:
    def __init__(self, value: int) -> None:
        self.value = value


def test_one_build_per_object_and_each_object_its_own_answer() -> None:
    table: dict[int, tuple[_Thing, int]] = {}
    calls: list[int] = []

    def build(t: _Thing) -> int:
        calls.append(t.value)
        return t.value * 10

    a, b = _Thing(1), _Thing(2)
    assert [identity_memo(table, x, build, limit=8) for x in (a, b, a, b)] == [10, 20, 10, 20]
    assert calls == [1, 2]


def test_an_equal_but_other_object_is_built_again() -> None:
    table: dict[int, tuple[tuple[int, ...], int]] = {}
    first, second = (1, 2, 3), tuple([1, 2, 3])
    assert first == second and first is not second
    identity_memo(table, first, len, limit=8)
    assert identity_memo(table, second, lambda t: -1, limit=8) == -1


def test_a_reused_id_is_not_taken_for_the_old_object() -> None:
    """An entry whose id now belongs to another object (planted here) is a miss."""
    old, new = _Thing(1), _Thing(2)
    table = {id(new): (old, 99)}
    assert identity_memo(table, new, lambda t: t.value, limit=8) == 2


def test_past_the_limit_the_table_starts_over() -> None:
    table: dict[int, tuple[_Thing, int]] = {}
    things = [_Thing(i) for i in range(10)]
    for t in things:
        identity_memo(table, t, lambda x: x.value, limit=4)
        assert len(table) <= 5
    assert identity_memo(table, things[-1], lambda x: -1, limit=4) == 9  # the newest is kept


def test_a_typed_scalar_tells_equal_values_of_other_types_apart() -> None:
    from generator.memo import typed_scalar

    keys = [typed_scalar(v) for v in (1, True, 1.0, "1", 0.0, -0.0, None)]
    assert len(set(keys)) == len(keys) and None not in keys
    assert typed_scalar([1]) is None and typed_scalar({"a": 1}) is None
