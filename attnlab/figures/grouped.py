"""Which query heads share each key/value head, for several sharing schemes side by side (no Streamlit)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnlab.figures.palette import current
from attnlab.figures.prebuilt import TEMPLATE
from attnlab.figures.text import esc

TEXT_HEADS = 16  # past this many query heads the cells are too narrow for their key/value head's name


def sharing_figure(
    rows: Sequence[str], kv_of_head: Sequence[Sequence[int]], head_names: Sequence[str], kv_name: str, hover: str
) -> go.Figure:
    """One row per scheme, one cell per query head, coloured and named by the key/value head it reads.

    `kv_of_head[r][h]` is the key/value head query head h reads in scheme r (from 0); `kv_name` a format string for
    a key/value head's name (`"kv{j}"`, j from 1), `hover` one with `{q}` and `{kv}` for a cell's hover text. Colours
    run over each row's key/value heads, so every row uses the whole scale.
    """
    kv = np.asarray(kv_of_head, dtype=float)  # (R, H)
    spans = np.maximum(kv.max(axis=1, keepdims=True), 1.0)
    names = [[kv_name.format(j=int(j) + 1) for j in row] for row in kv]  # counted from 1, as heads are
    tips = [
        [esc(hover.format(q=head_names[h], kv=names[r][h])) for h in range(kv.shape[1])] for r in range(kv.shape[0])
    ]
    strip = dict(
        type="heatmap",
        z=kv / spans,
        x=[esc(n) for n in head_names],
        y=[esc(r) for r in rows],
        zmin=0.0,
        zmax=1.0,
        colorscale=current().heads,
        showscale=False,
        xgap=2,
        ygap=4,
        customdata=np.array(tips, dtype=object),
        hovertemplate="%{customdata}<extra></extra>",
        text=[[esc(n) for n in row] for row in names],
        texttemplate="%{text}" if kv.shape[1] <= TEXT_HEADS else None,
    )
    layout = dict(
        template=TEMPLATE,
        height=60 + 44 * len(rows),
        margin=dict(l=10, r=10, t=10, b=10),
        xaxis=dict(side="top", showgrid=False),
        yaxis=dict(autorange="reversed", showgrid=False),
    )
    return go.Figure(dict(data=[strip], layout=layout))  # validated once, not property by property
