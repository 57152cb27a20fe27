"""How the stages show modern attention: shared key/value heads, RoPE's rotation, ALiBi's bias and the mask's rule.

The stage table (`attnlab.ui.parts.stages`) keeps its eleven stages; these functions add to them. K and V say which
query heads share each key/value head; the scores show q and k before and after the rotation and the angle each
pair turns by (RoPE); the mask stage writes the rule, counts the pairs it allows, and shows ALiBi's bias.
"""

from __future__ import annotations

import plotly.graph_objects as go

from attnlab.figures.modern import alibi_figure, angles_figure, rotation_figure
from attnlab.masks import END_OF_DOCUMENT
from attnlab.ui.app.i18n import t
from attnlab.ui.app.text import md_escape
from attnlab.ui.parts.stage_view import StageView, mask_note, split_note, square

Extra = tuple[str, go.Figure]  # a caption and the figure under it, drawn before the stage's own figure


def heads_text(first: int, last: int) -> str:
    """Query heads first..last, counted from 1: '1', '1–2'."""
    return str(first + 1) if first == last else f"{first + 1}–{last + 1}"


def sharing(view: StageView) -> str:
    """Which query heads read each key/value head: 'K/V head 1: query heads 1–2; K/V head 2: ...'."""
    steps = view.steps
    return t(
        "stages.kv_groups",
        groups="; ".join(
            t("stages.kv_group", kv=j + 1, heads=heads_text(j * steps.group, (j + 1) * steps.group - 1))
            for j in range(steps.n_kv_heads)
        ),
    )


def kv_note(view: StageView) -> str | None:
    """The head split, and with shared heads how many K/V heads there are and who reads each."""
    steps = view.steps
    if steps.n_kv_heads == steps.n_heads:
        return split_note(view)
    if view.one is not None:
        return t("stages.kv_one", h=view.one + 1, kv=steps.kv_head(view.one) + 1, group=steps.group)
    return t("stages.kv_note", kv=steps.n_kv_heads, h=steps.n_heads, d_k=steps.d_k) + " " + sharing(view)


def scores_formula(view: StageView) -> str:
    """S = Q K^T, or with RoPE the rotated queries and keys: S_ij = (R_i q_i) · (R_j k_j)."""
    s = view.sub
    if view.steps.rope is None:
        return rf"S_{s} = Q_{s} K_{s}^\top"
    return rf"(S_{s})_{{ij}} = (R_i\,q_i)^\top (R_j\,k_j) = q_i^\top R_{{j-i}}\,k_j"


def rope_extras(view: StageView) -> list[Extra]:
    """With RoPE: the first shown head's q and k before and after the rotation, and each pair's angle by position."""
    steps = view.steps
    if steps.rope is None:
        return []
    h = view.shown[0]
    kv = steps.kv_head(h) + 1
    titles = [t(f"stages.rope_{name}") for name in ("q", "q_rot", "k", "k_rot")]  # the heads: in the caption
    convention = t(f"stages.rope_{steps.rope}", d_k=steps.d_k, half=steps.d_k // 2)
    rotation = rotation_figure(steps, h, view.tokens, titles, row_name=t("stages.token"), col_name=t("stages.dim"))
    angles = angles_figure(steps, view.tokens, row_name=t("stages.token"), col_name=t("stages.pair"))
    return [
        (t("stages.rope_rotation", h=h + 1, kv=kv, convention=convention), rotation),
        (t("stages.rope_angles", base=f"{steps.rope_base:g}", d_k=steps.d_k), angles),
    ]


RULES = {  # where M_ij = 0 (the query may see the key), in the rule's own numbers
    "window": r"i - {w} < j \le i",
    "sinks": r"j \le i \ \wedge\ (i - {w} < j \ \vee\ j < {s})",
    "prefix": r"j < {p} \ \vee\ j \le i",
    "documents": r"\mathrm{{doc}}(j) = \mathrm{{doc}}(i) \ \wedge\ j \le i",
}


def rule_formula(view: StageView) -> str:
    """M for the run's rule: 0 where the query may see the key, -inf elsewhere (the classic two as before)."""
    kind = view.rule.kind if view.rule is not None else ("causal" if view.causal else "full")
    if kind == "full":
        return "M = 0"
    if kind == "causal":
        return r"M_{ij} = \begin{cases}0 & j \le i\\ -\infty & j > i\end{cases}"
    rule = view.rule
    allowed = RULES[kind].format(w=rule.window, s=rule.sinks, p=rule.prefix)
    otherwise = t("stages.otherwise")
    return rf"M_{{ij}} = \begin{{cases}}0 & {allowed}\\ -\infty & \text{{{otherwise}}}\end{{cases}}"


def masked_formula(view: StageView) -> str:
    """S'' = S' + M, with ALiBi's bias B added before the mask when it is on."""
    if view.steps.alibi is None:
        return rf"S'' = S' + M,\quad {rule_formula(view)}"
    return rf"S'' = S' + B + M,\quad B_{{ij}} = -m_h\,|i - j|,\quad {rule_formula(view)}"


def rule_note(view: StageView) -> str:
    """The rule in words, the pairs it allows out of T x T, and the documents it found."""
    rule = view.rule
    if rule is None or rule.kind in ("full", "causal"):
        return mask_note(view)
    n = view.t_len
    words = t(f"stages.rule_{rule.kind}", window=rule.window, sinks=rule.sinks, prefix=rule.prefix)
    count = t("stages.rule_count", allowed=rule.allowed, total=n * n, share=f"{rule.allowed / max(1, n * n):.0%}")
    if rule.kind != "documents":
        return f"{words} {count}"
    ids = list(rule.documents or [])
    spans = [(ids.index(d), len(ids) - 1 - ids[::-1].index(d)) for d in dict.fromkeys(ids)]
    docs = ", ".join(f"{a + 1}–{b + 1}" if a != b else str(a + 1) for a, b in spans)
    return (
        f"{words} {t('stages.rule_documents_found', n=len(spans), spans=docs, end=md_escape(END_OF_DOCUMENT))} {count}"
    )


def alibi_extras(view: StageView) -> list[Extra]:
    """With ALiBi: the bias each shown head adds, titled with its slope."""
    steps = view.steps
    if steps.alibi is None:
        return []
    from attnlab.positions import alibi_slopes

    slopes = alibi_slopes(steps.n_heads)
    titles = [t("stages.alibi_head", h=h + 1, m=f"{slopes[h].item():.4g}") for h in view.shown]
    figure = alibi_figure(steps, view.shown, view.tokens, titles, **square(view))
    one = f" ({titles[0]})" if len(view.shown) == 1 else ""  # a lone panel has no title: its slope goes here
    return [(t("stages.alibi_note") + one, figure)]
