"""Figures of modern attention's stages: q and k before and after RoPE, the angle each pair turns by, ALiBi's bias.

Plain builders over the matrix figures (no Streamlit): the Playground draws them inside its stages, and a notebook
rebuilds the same ones from a run (`attnlab.multihead.MultiHeadSteps`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnlab.figures.grid import grid_figure, matrices_figure
from attnlab.figures.matrix import matrix_figure
from attnlab.figures.text import dim_labels
from attnlab.multihead import MultiHeadSteps
from attnlab.positions import angles, pairs


def pair_labels(d_k: int, interleaved: bool) -> list[str]:
    """One column label per rotated pair: the two dimensions it turns, e.g. `d0·d2` (rotate-half, d_k = 4)."""
    return [f"d{i}·d{j}" for i, j in pairs(d_k, interleaved)]


def rotation_figure(steps: MultiHeadSteps, head: int, tokens: Sequence[str], titles: Sequence[str], **kw) -> go.Figure:
    """Query head `head`'s q and the key head it reads, before and after the rotation: four panels, one scale."""
    if steps.rope is None:
        raise ValueError("rotation_figure needs a run with RoPE (steps.rope is None)")
    kv = steps.kv_head(head)
    mats = [
        steps.q_unrotated[head].numpy(),
        steps.heads.q[head].numpy(),
        steps.k_unrotated[kv].numpy(),
        steps.k_shared[kv].numpy(),
    ]
    return grid_figure(mats, titles, tokens, dim_labels(steps.d_k), **kw)


def angles_figure(steps: MultiHeadSteps, tokens: Sequence[str], **kw) -> go.Figure:
    """(T, d_k/2): the angle in radians each pair has turned by at each token's position, p · base^(-2i/d_k)."""
    if steps.rope is None:
        raise ValueError("angles_figure needs a run with RoPE (steps.rope is None)")
    theta = angles(len(tokens), steps.d_k, base=steps.rope_base).numpy()
    cols = pair_labels(steps.d_k, steps.rope == "interleaved")
    return matrix_figure(theta, tokens, cols, kind="positive", **kw)


def alibi_figure(steps: MultiHeadSteps, shown: Sequence[int], tokens: Sequence[str], titles: Sequence[str], **kw):
    """ALiBi's bias -m_h |i - j| for each shown head: what is added to the scaled scores before the mask."""
    if steps.alibi is None:
        raise ValueError("alibi_figure needs a run with ALiBi (steps.alibi is None)")
    mats = [np.asarray(steps.alibi[h].numpy()) for h in shown]
    return matrices_figure(mats, titles, tokens, tokens, **kw)
