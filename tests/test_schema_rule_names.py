"""The JSON Schema converter's rule names: ``Rules.reserve`` starts its search for a free
name where the last search of the same base stopped, and must hand out exactly the name the
plain first-free search would, whatever was reserved, inserted or dropped before."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gbnf_sampler.schema.emit import Rules, _is_helper, sanitize


def first_free(taken: dict[str, str | None], hint: str) -> str:
    """The reference: the first of base, base-2, base-3 ... not taken."""
    base = sanitize(hint)
    if _is_helper(base):
        base += "-schema"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


# hints that collide on purpose: "a-2" is both a base and the second name of "a"
HINTS = st.sampled_from(["a", "a-2", "a-2-2", "a-3", "a_2", "b", "value", "value-2", "x-10"])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("reserve"), HINTS),
        st.tuples(st.just("drop"), st.integers(min_value=0, max_value=30)),
        st.tuples(st.just("insert"), HINTS),
    ),
    max_size=60,
)


@settings(max_examples=400, deadline=None)
@given(OPS)
def test_reserve_matches_the_first_free_name(ops: list[tuple[str, object]]) -> None:
    rules = Rules()
    reference: dict[str, str | None] = {}
    for op, arg in ops:
        if op == "reserve":
            expected = first_free(reference, str(arg))
            assert rules.reserve(str(arg)) == expected
            reference[expected] = None
        elif op == "insert":  # helpers are put under fixed names, bypassing reserve
            name = sanitize(str(arg))
            rules.bodies.setdefault(name, None)
            reference.setdefault(name, None)
        elif reference:
            victim = list(reference)[int(str(arg)) % len(reference)]
            rules.drop(victim)
            del reference[victim]
        assert list(rules.bodies) == list(reference)


def test_a_dropped_name_is_handed_out_again() -> None:
    rules = Rules()
    names = [rules.reserve("item") for _ in range(4)]
    assert names == ["item", "item-2", "item-3", "item-4"]
    rules.drop("item-2")
    assert rules.reserve("item") == "item-2"
    assert rules.reserve("item") == "item-5"


def test_many_names_of_one_base_stay_distinct() -> None:
    rules = Rules()
    names = [rules.reserve("properties-file") for _ in range(5000)]
    assert len(set(names)) == 5000
    assert names[-1] == "properties-file-5000"
