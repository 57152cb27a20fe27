"""Which heads push the prediction: contract 19's attribution at the picked position, beside the head finder's scores.

For the character the model predicts at the picked position (or any character the student types), every head's
output through its slice of W_O, every MLP's output and the embedding, each read through the final norm (its scale
frozen at this position's whole stream) and the character's unembedding row: bars that sum to its logit. Each head's
bar is labelled with the finder score it is strongest at, and a table beside the bars lists the heads that push
hardest with that score, so "a previous-token head" and "raised 霜 by 2.1" sit together; a click on a head's bar
opens that head stage by stage below. The switch sits under the finder's scores; the bars, full width, under both
columns, drawn only while the switch is on.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnlab.figures.lm import parts_figure
from attnlab.lm import LanguageModel
from attnlab.lmlab.finder import SCORES
from attnlab.lmlab.forming import Push, strongest
from attnlab.lmlab.reading import Reading, shown
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import code, markdown_table
from attnlab.ui.app.widgets import chart_config
from attnlab.ui.pages.lm.model import LM, memo, predicted_of, pushes_of, section_switch

BARS = 16  # bars drawn at most: the largest parts, the rest summed into one
ROLE_FLOOR = 0.3  # a head is named for its strongest finder score from this share of its weight on
TABLE_HEADS = 4  # heads listed with their scores under the chart: the largest pushes
SHARE = 0.6  # of the page's width, the bars' column (the table takes the rest)
INSIDE = "lm.inside_open"  # the one-head view's expander (ui/pages/lm/inside.py)


def switch() -> bool:
    """The switch (kept in the link's `open`)."""
    return section_switch("attribution", t("lm.push_title"), t("lm.push_switch_help"))


def section(lm: LanguageModel, step: int | None, got: Reading, grids: dict[str, np.ndarray | None]) -> None:
    """The character box, the bars and the sum beside the heads that push hardest with their finder scores."""
    st.markdown(f"**{t('lm.push_title')}**")
    q = LM["q"]
    position = got.n_tokens - 1 if q == 0 else q - 1
    predicted = predicted_of(LM["model"], step, got.ids, position, got)
    guess = shown(lm.token(predicted))
    st.text_input(t("lm.target"), key=LM.key("target"), placeholder=guess, help=t("lm.target_help", guess=guess))
    token = target(lm, predicted)
    rows, logit = pushes_of(LM["model"], step, got.ids, position, token, got)
    char = shown(lm.token(token))
    here = t("lm.push_end") if q == 0 else t("lm.push_at", i=q, piece=shown(got.pieces[q]))
    inputs = (LM["model"], step, got.ids, position, token)
    left, right = st.columns([SHARE, 1 - SHARE])
    with left:
        clickable(memo("parts", inputs, lambda: figure(lm, rows, grids, char, here)))
    with right:
        total = sum(r.value for r in rows)
        st.caption(t("lm.push_sum", char=code(char, 8), total=f"{total:.3f}", logit=f"{logit:.3f}"))
        table(rows, grids, char)


def target(lm: LanguageModel, predicted: int) -> int:
    """The typed character's id, or the predicted one (empty box, or a character the vocabulary lacks: said)."""
    typed = LM["target"]
    if not typed:
        return predicted
    try:
        return lm.token_id(typed)
    except ValueError:
        guess = code(shown(lm.token(predicted)), 8)
        st.warning(t("lm.target_unknown", typed=code(typed, 16), used=guess), icon=":material/translate:")
        return predicted


def best_score(grids: dict[str, np.ndarray | None], layer: int, head: int) -> tuple[str, float] | None:
    """The finder score a head is strongest at on this text (its name and value); None when the text shows none."""
    have = [(k, float(g[layer, head])) for k in SCORES if (g := grids.get(k)) is not None]
    return max(have, key=lambda kv: kv[1], default=None)


def role(grids: dict[str, np.ndarray | None], layer: int, head: int) -> tuple[str, float] | None:
    """The finder score a head is strongest at, when it reaches ROLE_FLOOR (a head's name on its bar)."""
    best = best_score(grids, layer, head)
    return best if best is not None and best[1] >= ROLE_FLOOR else None


def name_of(row: Push, grids: dict[str, np.ndarray | None]) -> str:
    """A bar's label: the embedding, 'head L.H · its role', 'MLP L', the bias of a layer, or the rest."""
    if row.kind == "head":
        found = role(grids, row.layer, row.head)
        tag = f" · {t(f'lm.role_{found[0]}')} {found[1]:.2f}" if found else ""
        return f"{row.layer + 1}.{row.head + 1}{tag}"
    if row.kind == "rest":
        return t("lm.part_rest", n=row.count)
    if row.kind == "embed":
        return t("lm.part_embed")
    return t(f"lm.part_{row.kind}", layer=row.layer + 1)


def figure(lm: LanguageModel, rows: list[Push], grids: dict[str, np.ndarray | None], char: str, here: str):
    """The bars for this session's language and palette."""
    shown_rows = strongest(rows, BARS)
    labels = [name_of(r, grids) for r in shown_rows]
    kinds = [{"embed": 0, "head": 1, "mlp": 2}.get(r.kind, 3) for r in shown_rows]
    hover = [f"{label}: {r.value:+.3f}" for label, r in zip(labels, shown_rows, strict=True)]
    picks = [[r.layer, r.head] if r.kind == "head" else None for r in shown_rows]
    names = [t("lm.part_embed"), t("lm.part_heads"), t("lm.part_mlps"), t("lm.part_others")]
    title = t("lm.push_chart", char=char, where=here)
    values = [r.value for r in shown_rows]
    return parts_figure(labels, values, kinds, hover, picks, names, title, t("lm.push_axis"), share=SHARE)


def clickable(figure) -> None:
    """The bars; a click on a head's bar picks that head and opens its stages below."""
    key = LM.key("parts_chart")

    def picked() -> None:
        points = st.session_state[key]["selection"]["points"]
        chosen = [p["customdata"] for p in points if p.get("customdata")]
        if chosen:
            LM["layer"], LM["head"] = int(chosen[0][0]) + 1, int(chosen[0][1]) + 1
            st.session_state[INSIDE] = True

    st.plotly_chart(
        figure,
        width="stretch",
        on_select=picked,
        selection_mode="points",
        key=key,
        config=chart_config(key, image_only=True),
        theme="streamlit",
    )
    st.caption(t("lm.push_click"))


def table(rows: list[Push], grids: dict[str, np.ndarray | None], char: str) -> None:
    """The heads that push hardest, each with the finder score it is strongest at on this text."""
    heads = sorted((r for r in rows if r.kind == "head"), key=lambda r: -abs(r.value))[:TABLE_HEADS]
    header = (t("lm.head"), t("lm.push_on", char=char), t("lm.push_role"))
    body = []
    for r in heads:
        best = best_score(grids, r.layer, r.head)
        said = "–" if best is None else f"{t(f'lm.score_{best[0]}')} {best[1]:.2f}"
        body.append((f"{r.layer + 1}.{r.head + 1}", f"{r.value:+.2f}", said))
    st.markdown(markdown_table(header, body))
