"""The Playground's "Compare with…": its difference equals that of two Playground runs read from their charts."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.ui.app.i18n import catalog
from tests.app.charts import heatmap_values
from tests.app.conftest import assert_clean, open_page, texts

TEXT = "the cat sat on the mat"
WEIGHTS_CHART = 7  # the Playground draws one chart per stage: X, Q, K, V, S, S', M, A, ...


def playground_weights(**query: str) -> np.ndarray:
    """Head 1's softmax weights as a plain Playground run sends them to the browser."""
    at = open_page(text=TEXT, heads="1", **query)
    assert_clean(at)
    return heatmap_values(at, WEIGHTS_CHART)[0]


@pytest.mark.parametrize(
    ("change", "base", "other"),
    [
        ("causal", {"causal": "false"}, {"causal": "true"}),
        ("seed", {"seed": "7"}, {"seed": "8"}),
        ("positions", {"pe": "false"}, {"pe": "true"}),
    ],
)
def test_the_difference_is_the_difference_of_two_playground_runs(change, base, other):
    at = open_page(text=TEXT, heads="1", compare=change, **base)
    assert_clean(at)
    pairs = {i: heatmap_values(at, i) for i in range(len(at.get("plotly_chart")))}
    both = [v for v in pairs.values() if len(v) == 2]  # this run | with the change
    diffs = [v[0] for v in pairs.values() if len(v) == 1]
    a, b = playground_weights(**base), playground_weights(**other)
    same = [p for p in both if p[0].shape == a.shape]
    assert any(np.allclose(p[0], a, atol=1e-6) and np.allclose(p[1], b, atol=1e-6) for p in same)
    assert any(np.allclose(d, b - a, atol=1e-6) for d in diffs if d.shape == a.shape)


def test_a_stage_the_change_cannot_touch_says_so(lang):
    at = open_page(text=TEXT, compare="causal", lang=lang)
    assert catalog(lang)["present.whatif.unchanged"] in [c.value for c in at.caption]  # X does not see the mask


def test_an_unknown_change_in_the_link_is_replaced_and_said(lang):
    at = open_page(compare="everything", lang=lang)
    assert_clean(at)
    assert any("compare=everything" in w for w in texts(at, "warning"))
    assert len(at.get("plotly_chart")) == 11


def test_the_present_link_carries_the_state():
    at = open_page(text=TEXT, seed="9", causal="true")
    url = at.get("link_button")[0].proto.url
    assert url.startswith("present?") and "seed=9" in url and "causal=true" in url and "step=1" in url
