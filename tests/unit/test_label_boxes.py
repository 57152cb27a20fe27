"""The browser tests' label-collision rule (`tests/e2e/label_boxes.py`), on boxes written by hand."""

from __future__ import annotations

from tests.e2e.label_boxes import collisions, crowded, describe


def box(x: float, y: float, width: float = 40, height: float = 16, text: str = "a", chart: int = 0) -> dict:
    return dict(kind="annotation", text=text, x=x, y=y, width=width, height=height, chart=chart)


def test_boxes_that_overlap_more_than_the_tolerance_both_ways_collide_and_touching_ones_do_not():
    a = box(0, 0)
    assert collisions([a, box(37, 5)]) == [(a, box(37, 5))]  # 3 px across, 11 down
    assert collisions([a, box(38, 5)]) == []  # 2 px across: the tolerance
    assert collisions([a, box(10, 14)]) == []  # 2 px down
    assert collisions([a, box(10, 13)]) == [(a, box(10, 13))]
    assert collisions([a, box(40, 0), box(0, 16)]) == []  # side by side and stacked, touching


def test_every_colliding_pair_is_found_whatever_the_order_and_the_chart():
    far, b, c = box(0, 500), box(5, 100, chart=1), box(20, 104, chart=2)
    found = collisions([c, far, b, box(300, 100)])
    assert found == [(b, c)]
    assert describe(found[0]).startswith("charts 1 and 2: annotation")


def test_labels_on_one_line_must_keep_a_gap_between_them():
    """Two subplot titles 2 px apart read as one ("k, K/V head 1k rotated, K/V head 1"); stacked lines do not."""
    a = box(0, 0)
    assert crowded([a, box(42, 0)]) == [(a, box(42, 0))]  # 2 px apart on one line
    assert crowded([a, box(44, 1)]) == []
    assert crowded([a, box(0, 17), box(42, 17)]) == [(box(0, 17), box(42, 17))]  # under it: only the pair on its line
