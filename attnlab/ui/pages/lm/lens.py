"""Where the prediction forms: the logit lens of the text on screen, a layers x positions grid (contract 19).

Each cell is the likeliest next character read from the residual stream after the embedding or after a layer (through
the final RMSNorm and the unembedding), coloured by its probability, in bold where it is the character that really
comes next; the hover gives that character's rank there. The last row is the model's output. A click on a cell picks
that position for the whole page (the top ten, the attribution). Drawn only while its section is open.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnlab.figures.lm_grids import lens_figure
from attnlab.lm import LanguageModel
from attnlab.lmlab.finder import line_period
from attnlab.lmlab.forming import LensGrid
from attnlab.lmlab.reading import Reading, shown
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import picking_chart
from attnlab.ui.pages.lm.model import LM, lens_of, memo, section_box
from attnlab.ui.pages.lm.predict import WIDTH

MAX_ROWS = 9  # layer rows drawn at most: a deep model shows evenly spaced layers, the embedding and the output
START = "▶"  # the start marker <bos>, as a cell writes it


def section(lm: LanguageModel, step: int | None, got: Reading) -> None:
    """The expander; inside, the grid and what it says about the picked position."""
    box = section_box("lens", t("lm.lens_title"), ":material/center_focus_strong:")
    if not box.open:
        return
    with box:
        grid = lens_of(LM["model"], step, got.ids, got)
        st.caption(t("lm.lens_help", layers=lm.n_layers))
        q = LM["q"]
        position = got.n_tokens - 1 if q == 0 else q - 1  # the row whose next character the page predicts
        inputs = (LM["model"], step, got.ids, position)
        clickable(memo("lens", inputs, lambda: figure(lm, got, grid, position)), got.n_tokens)
        say(lm, got, grid, position)


def rows_of(n_layers: int) -> list[int]:
    """Which of the L + 1 rows are drawn: all, or MAX_ROWS evenly spaced with the first and the last."""
    if n_layers + 1 <= MAX_ROWS:
        return list(range(n_layers + 1))
    return sorted({round(i * n_layers / (MAX_ROWS - 1)) for i in range(MAX_ROWS)})


def row_name(row: int, n_layers: int, short: bool = False) -> str:
    """'embedding', 'layer 1', ..., 'layer L = output' (short: the grid's row labels, narrow enough for a phone)."""
    end = "_short" if short else ""
    if row == 0:
        return t(f"lm.lens_embed{end}")
    return t(f"lm.lens_output{end}", layer=row) if row == n_layers else t(f"lm.lens_layer{end}", layer=row)


def figure(lm: LanguageModel, got: Reading, grid: LensGrid, position: int):
    """The grid for this session's language and palette: the text's pieces wrapped like the painted text."""
    rows = rows_of(lm.n_layers)
    tops = [[START if i == lm.vocab.bos_id else shown(lm.token(i)) for i in grid.top[r]] for r in rows]
    n = got.n_tokens
    first = np.zeros((len(rows), n), dtype=bool)
    first[:, : n - 1] = grid.rank[rows] == 1
    cell = t("lm.lens_cell", layer="{name}", piece="%{customdata[1]}", top="%{customdata[2]}", p="%{customdata[3]:.2f}")
    rank = t("lm.lens_rank", piece="%{customdata[4]}", rank="%{customdata[5]}", p="%{customdata[6]:.2f}")
    period = line_period(got.pieces, got.lead)
    inputs = [START if i < got.lead else p for i, p in enumerate(got.labels)]
    short = [row_name(r, lm.n_layers, short=True) for r in rows]
    data = (grid.rank[rows], grid.actual[rows], first)
    words = (t("lm.lens_text"), WIDTH, period, position, t("lm.prob_word"))
    return lens_figure(inputs, tops, grid.prob[rows], data, short, (f"{cell} · {rank}", cell), *words)


def clickable(figure, n: int) -> None:
    """The grid of n positions; a click on a cell picks its position for the page (q: the prediction made for the
    token after it, 0 after the whole text)."""

    def picked(data) -> None:
        i = int(data[0])  # a cell's data starts with its position
        LM["q"], LM["gen"] = (0 if i >= n - 1 else i + 1), 0

    picking_chart(figure, LM.key("lens_chart"), picked)


def say(lm: LanguageModel, got: Reading, grid: LensGrid, position: int) -> None:
    """Where the picked prediction forms: the first layer from which the real next character (or, after the whole
    text, the output's likeliest) stays the likeliest."""
    here = shown(got.pieces[position]) if position >= got.lead else START
    if position < got.n_tokens - 1:
        nxt, formed = shown(got.pieces[position + 1]), grid.formed(position)
        if formed is None:
            rank = int(grid.rank[-1, position])
            st.markdown(t("lm.lens_never", here=code(here, 8), next=code(nxt, 8), rank=rank))
            return
    else:
        out = grid.top[-1, position]
        nxt = shown(lm.token(out))
        same = grid.top[:, position] == out
        formed = len(same) - 1
        while formed > 0 and same[formed - 1]:
            formed -= 1
    where = t("lm.lens_at_embed") if formed == 0 else t("lm.lens_at_layer", layer=formed)
    late = formed == lm.n_layers > 0  # only the output ranks it first
    key = ("lm.lens_late" if late else "lm.lens_formed") + ("" if position < got.n_tokens - 1 else "_end")
    p = f"{grid.prob[formed, position]:.2f}"
    st.markdown(t(key, here=code(here, 8), next=code(nxt, 8), where=where, layer=formed, p=p))
