"""A page's folded sections in its link (`open=`, issue 61): in the page's order, unknown names dropped and said."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab import links
from attnlab.params import Invalid, open_param

SECTIONS = ("resplit", "concat", "fused", "dropout")


@given(st.lists(st.sampled_from(SECTIONS)))
def test_known_names_are_read_in_the_pages_order_once_each_and_written_back_the_same(names):
    param = open_param(SECTIONS)
    value = param.parse(",".join(reversed(names)))
    assert value == [s for s in SECTIONS if s in names]
    assert param.parse(param.dump(value)) == value


@pytest.mark.parametrize("raw", ["", " ", ",", ", ,"])
def test_nothing_open_is_a_value_not_a_mistake(raw):
    assert open_param(SECTIONS).parse(raw) == []


def test_an_unknown_name_is_dropped_and_said_and_the_known_ones_stay_open():
    with pytest.raises(Invalid) as bad:
        open_param(SECTIONS).parse("Fused, nope ,<b>x</b>")
    assert bad.value.reason == "not_choice" and bad.value.used == ["fused"]
    assert bad.value.fmt["options"] == ", ".join(SECTIONS)


@pytest.mark.parametrize(
    ("scope", "query", "opened"),
    [
        ("mh", "open=gqa,resplit", ["resplit", "gqa"]),
        ("cross", "open=check", ["check"]),
        ("kv", "open=mla", ["mla"]),
        ("bench", "open=studies,grid", ["grid", "studies"]),
        ("lm", "open=training", ["training"]),
        ("lcost", "", []),
    ],
)
def test_a_link_opens_the_same_sections_in_a_notebook_as_on_its_page(scope, query, opened):
    values, replaced = links.read([scope], links.split_query(query))
    assert values[scope]["open"] == opened and not replaced
