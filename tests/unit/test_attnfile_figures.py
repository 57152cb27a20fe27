"""The notebook API's figures: importable without Streamlit, drawn from the file's own numbers, any T_q and T_k."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from attnlab import attnfile
from attnlab.attnexamples import EXAMPLES, kind_of
from attnlab.figures import head_view, model_view, query_key_map
from attnlab.figures.pretrained import (
    head_lines_figure,
    model_view_figure,
    pooled,
    thumb_sides,
    thumbnail_levels,
    thumbnails,
)
from attnlab.pretrained import load_minilm
from attnlab.qkmap import agreement, qk_map
from tests.conftest import FRESH_GROUP
from tests.fresh import answer


def saved(weights, tokens, tokens_k=None, **kw) -> attnfile.AttentionFile:
    """The file `save` writes for these arrays, read back by `load` (what a notebook user hands the figures)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.safetensors"
        attnfile.save(path, weights, tokens, tokens_k, **kw)
        return attnfile.load(path.name, path.read_bytes())


def a_file(t_q: int = 5, t_k: int = 5, layers: int = 2, heads: int = 3, d: int = 4, seed: int = 0, tokens_k=None):
    """A file whose weights are the softmax of its own queries and keys."""
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(layers, heads, t_q, d, generator=g), torch.randn(layers, heads, t_k, d, generator=g)
    weights = torch.softmax(q @ k.transpose(-1, -2), dim=-1)  # (L, H, T_q, T_k)
    tokens = [f"q{i}" for i in range(t_q)]
    keys = tokens_k or (tokens if t_q == t_k else [f"k{j}" for j in range(t_k)])
    return saved(weights, tokens, keys, model="tiny", queries=q, keys=k)


@FRESH_GROUP
def test_the_notebook_api_imports_without_streamlit(fresh_answers):
    """A fresh interpreter imports the figures (after the core, before any page): Streamlit does not come with them."""
    assert answer(fresh_answers, "figures_imports") == []


@pytest.mark.parametrize(("t_q", "t_k"), [(5, 5), (3, 9), (9, 3), (100, 130), (1, 1)])
def test_the_model_view_pools_any_shape_and_keeps_the_peaks(t_q, t_k):
    rows, cols = thumb_sides(t_q, t_k)
    maps = np.zeros((2, 3, t_q, t_k))
    maps[1, 2, t_q - 1, t_k - 1] = 1.0  # one sharp peak in the last corner
    small = pooled(maps, rows, cols)
    assert small.shape == (2, 3, rows, cols) and max(rows, cols) <= max(64, max(t_q, t_k))
    assert small[1, 2, -1, -1] == 1.0 and small[0].max() == 0.0
    picture = thumbnails(thumbnail_levels(maps))
    assert picture.shape[2] == 3 and picture.dtype == np.uint8
    spec = model_view_figure(maps, "Layer", "Head", (1, 2)).to_dict()
    markers = spec["data"][1]
    assert len(markers["x"]) == 6 and markers["customdata"][-1] == [1, 2]


def line_ends(spec: dict) -> list[tuple[int, int]]:
    """(query row, key row) of every line drawn."""
    ys = [y for tr in spec["data"] if tr["mode"] == "lines" for y in tr["y"]]
    return list(zip(ys[::3], ys[1::3], strict=True))


def test_head_lines_follow_a_query_or_a_key_and_skip_faint_weights():
    weights = np.array([[0.7, 0.3, 0.0], [0.01, 0.49, 0.5]])  # 2 queries, 3 keys
    as_row = head_lines_figure(weights, ["a", "b"], 1, "t", ["x", "y", "z"], None).to_dict()
    assert sorted(line_ends(as_row)) == [(1, 1), (1, 2)]  # 0.01 is under the drawing threshold
    as_col = head_lines_figure(weights, ["a", "b"], None, "t", ["x", "y", "z"], 0).to_dict()
    assert line_ends(as_col) == [(0, 0)]
    words = [tr["text"] for tr in as_col["data"] if tr["mode"] == "text"]
    assert words == [["a", "b"], ["<b>x</b>", "y", "z"]]


def test_token_text_reaches_plotly_escaped():
    spec = head_lines_figure(np.eye(2), ["<img src=x>", "b"], None, "<b>t</b>").to_dict()
    shown = [w for tr in spec["data"] if tr["mode"] == "text" for w in tr["text"]]
    assert "&lt;img src=x&gt;" in shown and spec["layout"]["title"]["text"] == "&lt;b&gt;t&lt;/b&gt;"


def test_the_notebook_figures_are_full_plotly_figures_of_the_files_numbers():
    file = a_file(t_q=4, t_k=6, tokens_k=[f"s{j}" for j in range(6)])
    assert isinstance(model_view(file), go.Figure)
    lines = head_view(file, 1, 2, query=0)
    assert isinstance(lines, go.Figure) and lines.layout.title.text.startswith("Layer 2")
    fig = query_key_map(file, 1, 2, query=3)
    points = [tr for tr in fig.data if tr.customdata is not None]
    qk = qk_map(file.queries[1, 2].numpy(), file.keys[1, 2].numpy())
    assert np.allclose(points[0].x, qk.xy_q[:, 0]) and np.allclose(points[1].y, qk.xy_k[:, 1])
    found = agreement(qk, file.attentions[1, 2].numpy(), 3)
    ringed = [tr for tr in fig.data if tr.marker.symbol == "circle-open"][0]
    assert np.allclose(ringed.x, qk.xy_k[found.nearest, 0])


def test_a_file_without_queries_and_keys_has_no_map():
    file = saved(torch.full((1, 1, 2, 2), 0.5), ["a", "b"])
    with pytest.raises(ValueError, match="queries and keys"):
        query_key_map(file, 0, 0)


def test_kinds_name_self_causal_and_cross():
    assert kind_of(a_file()) == "self"
    assert kind_of(a_file(t_q=3, t_k=4)) == "cross"
    causal = torch.tril(torch.ones(1, 1, 3, 3))
    assert kind_of(saved(causal / causal.sum(-1, keepdim=True), ["a", "b", "c"])) == "causal"


def test_the_minilm_example_carries_the_models_own_queries_and_keys():
    example = EXAMPLES["minilm"]
    file = example.build("Hello world")
    model = load_minilm()
    run = model.run("Hello world")
    steps = model.head_steps(run, 3, 5)
    assert torch.allclose(file.queries[3, 5], steps.q, atol=1e-6) and torch.allclose(
        file.keys[3, 5], steps.k, atol=1e-6
    )
    assert torch.equal(file.attentions, run.attentions) and kind_of(file) == "self"
