"""The Trained decoder page's "inside the circuit": generation with the cache, head and path patching, both
languages, the numbers on screen equal the library's, bad input said with the typed text kept."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnlab import trained
from attnlab.trained.patching import ablate_heads, path_map, redraw_first_period, shuffle_first_period
from attnlab.ui.app.i18n import catalog
from attnlab.ui.pages.decoder import sections as dec
from tests.app.charts import heatmap_values
from tests.app.conftest import assert_clean, open_page, texts

PAGE = "views/decoder.py"
SEQ = "k 3 x m q 7 k 3 x m q 7 k 3 x"


def query_value(at, name: str) -> str:
    """One URL parameter as AppTest keeps it (a string or a one-item list)."""
    value = at.query_params[name]
    return value if isinstance(value, str) else value[0]


def said(at, lang: str, key: str, **fmt) -> bool:
    """Whether some markdown or caption on the page is the catalog string `key`, filled with `fmt`."""
    want = catalog(lang)[f"patching.{key}"].format(**fmt)
    return any(want in str(m.value) for m in [*at.markdown, *at.caption])


def test_the_shipped_recipes_have_the_heads_the_receiver_param_offers():
    for name in dec.MODELS.values():
        log = json.loads((trained.run_dir(name) / "log.json").read_text())
        assert log["n_heads"] == dec.SHIPPED_HEADS


def test_closed_by_default_nothing_is_computed():
    at = open_page(PAGE, seq=SEQ)
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 2  # the layers' grids only


@pytest.mark.parametrize("model", list(dec.MODELS))
def test_the_stepper_draws_the_caches_rows_and_the_query_of_the_step(model, lang):
    at = open_page(PAGE, lang=lang, model=model, seq=SEQ, inside="generate", gen="3")
    assert_clean(at)
    decoder = trained.load(dec.MODELS[model])
    steps = trained.generate(decoder, SEQ.split(), 16)
    s, layers = steps[2], decoder.n_layers
    layer, head = layers - 1, 0  # the default head: the last layer's first
    t = len(SEQ.split()) + 1 + 2
    np.testing.assert_allclose(heatmap_values(at, layers)[0][0], s.query[layer, head], atol=1e-6)
    np.testing.assert_allclose(heatmap_values(at, layers + 1)[0], s.keys[layer, head], atol=1e-6)
    np.testing.assert_allclose(heatmap_values(at, layers + 2)[0], s.values[layer, head], atol=1e-6)
    np.testing.assert_allclose(heatmap_values(at, layers + 3)[0][0], s.weights[layer, head], atol=1e-6)
    assert heatmap_values(at, layers + 1)[0].shape[0] == t
    assert said(
        at,
        lang,
        "gen_story",
        i=3,
        n=16,
        token=f"`{s.token}`",
        t=t,
        symbol=f"`{s.symbol}`",
        p=f"{s.probs.max():.2f}",
        made=" ".join(f"`{x.symbol}`" for x in steps[:3]),
    )
    assert at.dataframe[-1].value.iloc[0, 0] == s.symbol


def test_next_moves_one_step_and_the_url_keeps_it():
    at = open_page(PAGE, seq=SEQ, inside="generate", gen="3")
    next_label = catalog("en")["patching.gen_next"]
    next(b for b in at.button if b.label == next_label).click().run()
    assert_clean(at)
    assert query_value(at, "gen") == "4" and query_value(at, "inside") == "generate"
    keys = heatmap_values(at, 3)[0]
    assert keys.shape[0] == len(SEQ.split()) + 1 + 3


def test_no_room_to_generate_is_said():
    full = " ".join(["a", "b"] * 32)
    at = open_page(PAGE, seq=full, inside="generate")
    assert_clean(at)
    assert texts(at, "info") == [catalog("en")["patching.gen_no_room"].format(cap=64)]


@pytest.mark.parametrize("corrupt", ["redraw", "shuffle"])
def test_head_patching_maps_are_the_librarys(corrupt, lang):
    at = open_page(PAGE, lang=lang, seq=SEQ, inside="heads", corrupt=corrupt)
    assert_clean(at)
    decoder = trained.load("induction-2l")
    clean = SEQ.split()
    bad = (redraw_first_period if corrupt == "redraw" else shuffle_first_period)(decoder, clean, 0)
    restored = trained.patch_heads(decoder, clean, bad)
    np.testing.assert_allclose(heatmap_values(at, 2)[0], restored, atol=1e-9)
    np.testing.assert_allclose(heatmap_values(at, 3)[0], ablate_heads(decoder, clean, bad), atol=1e-9)
    best = np.unravel_index(np.argmax(restored), restored.shape)
    assert any(f"**{restored[best]:.0%}**" in m.value and dec.head_name(*best) in m.value for m in at.markdown)
    assert at.selectbox(key="decoder.patch_head").value == dec.head_name(*best)
    assert len(at.get("plotly_chart")) == 2 + 2 + 4  # grids, the two maps, the head in both runs


def test_path_patching_grid_and_its_words(lang):
    at = open_page(PAGE, lang=lang, seq=SEQ, inside="paths", corrupt="shuffle", receiver="2.3", into="k")
    assert_clean(at)
    decoder = trained.load("induction-2l")
    clean = SEQ.split()
    grid = path_map(decoder, clean, shuffle_first_period(decoder, clean, 0), (1, 2))
    np.testing.assert_allclose(heatmap_values(at, 2)[0], grid, atol=1e-9)
    best = int(np.argmax(grid[:, 1]))
    assert any(f"**{grid[best, 1]:.0%}**" in m.value and f"1.{best + 1}" in m.value for m in at.markdown)
    prev = decoder.record["heads"]["previous"][0]
    assert any(f"{max(prev):.2f}" in m.value for m in at.markdown), "the previous-token score is stated"


def test_the_link_to_a_receivers_keys_is_kept():
    at = open_page(PAGE, seq=SEQ, inside="paths", receiver="2.1", into="v", corrupt="shuffle")
    assert_clean(at)
    assert query_value(at, "receiver") == "2.1" and query_value(at, "into") == "v"
    assert query_value(at, "corrupt") == "shuffle"


def test_a_receiver_in_layer_one_is_refused_in_words(lang):
    at = open_page(PAGE, lang=lang, seq=SEQ, inside="paths", receiver="1.2")
    assert_clean(at)
    assert texts(at, "error") == [catalog(lang)["patching.receiver_first"].format(receiver="`1.2`")]
    assert at.selectbox(key="decoder.receiver").value == "1.2"


def test_the_control_has_no_paths(lang):
    at = open_page(PAGE, lang=lang, model="1l", seq=SEQ, inside="paths")
    assert_clean(at)
    assert texts(at, "info") == [catalog(lang)["patching.paths_need_two"]]


def test_a_typed_corruption_of_another_length_is_said_and_kept(lang):
    at = open_page(PAGE, lang=lang, seq=SEQ, inside="heads", corrupt="typed", corrupt_seq="a b c")
    assert_clean(at)
    assert texts(at, "error") == [catalog(lang)["patching.corrupt_length"].format(n=3, clean=len(SEQ.split()))]
    assert at.text_input(key="decoder.corrupt_seq").value == "a b c"


def test_a_typed_corruption_with_unknown_symbols_is_said_and_kept(lang):
    typed = "K 3 x m q 7 k 3 x m q 7 k 3 x"
    at = open_page(PAGE, lang=lang, seq=SEQ, inside="heads", corrupt="typed", corrupt_seq=typed)
    assert_clean(at)
    assert len(texts(at, "error")) == 1 and "`K`" in texts(at, "error")[0]
    assert at.text_input(key="decoder.corrupt_seq").value == typed


def test_the_same_input_as_clean_and_corrupt_has_no_gap(lang):
    at = open_page(PAGE, lang=lang, seq=SEQ, inside="heads", corrupt="typed", corrupt_seq=SEQ)
    assert_clean(at)
    assert texts(at, "info") == [catalog(lang)["patching.no_gap"].format(gap="0.0000")]
    assert len(at.get("plotly_chart")) == 2  # the layers' grids: no map of a gap that is not there


def test_a_sequence_without_a_period_has_nothing_to_corrupt(lang):
    at = open_page(PAGE, lang=lang, seq="a b c d e", inside="heads")
    assert_clean(at)
    assert texts(at, "warning") == [catalog(lang)["patching.no_period"]]


def test_a_click_on_a_map_cell_opens_that_head():
    from attnlab.ui.pages.decoder.patching import CLICK_TRACE, clicked_head

    at = open_page(PAGE, seq=SEQ, inside="heads")
    traces = json.loads(at.get("plotly_chart")[2].proto.spec)["data"]
    assert [tr["type"] for tr in traces] == ["heatmap", "scatter"] and CLICK_TRACE == 1
    assert len(traces[1]["x"]) == 2 * 4 and traces[1]["marker"]["opacity"] == 0
    event = {"selection": {"points": [{"curve_number": 1, "point_index": 6}]}}
    assert clicked_head(event, 4) == (1, 2)
    assert clicked_head({"selection": {"points": [{"curve_number": 0, "point_index": 6}]}}, 4) is None
    assert clicked_head({"selection": {"points": []}}, 4) is None
