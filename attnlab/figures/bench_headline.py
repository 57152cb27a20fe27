"""The Benchmark page's headline chart (no Streamlit): one device's TFLOP/s against T, without a mask and causal.

Two panels side by side, one line per implementation in each (the colour it has on every Benchmark chart, one
legend entry for both panels), and the device's datasheet peak as a dashed reference line across both, labelled.
Several devices are compared with one figure each on a shared `y_max`, so their heights read alike. Only the
`Headline`'s measured numbers are drawn; words arrive translated and are escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from attnlab.bench.config import IMPLS
from attnlab.bench.headline import MASKS, Headline
from attnlab.figures.bench import PLOT_PX
from attnlab.figures.bench_layout import BELOW, hang
from attnlab.figures.lines import line_figure, rule, subplot_row, suffix
from attnlab.figures.palette import current
from attnlab.figures.text import esc

SPACING = 0.06  # between the two panels, a share of the width
HEADROOM = 1.15  # the y axis reaches this far past the peak, so the peak's label sits inside the panel


def short_t(t: int) -> str:
    """A sequence length as a tick on a narrow panel: '512', '1K', '16K'."""
    return f"{t // 1024}K" if t >= 1024 and t % 1024 == 0 else str(t)


def y_top(headlines: list[Headline]) -> float:
    """One y range for several devices: past the highest peak (or line, where a peak is unknown)."""
    return HEADROOM * max((max(h.peak or 0.0, h.top) for h in headlines), default=1.0)


def _traces(h: Headline, mask_names: Mapping[str, str], share_word: str) -> list[dict]:
    """Each line in its panel: the first panel an implementation appears in carries its legend entry."""
    palette, seen, data = current(), set(), []
    for line in h.lines:
        panel = MASKS.index(line.mask) + 1
        shares = [f" ({y / h.peak:.0%} {esc(share_word)})" if h.peak else "" for y in line.tflops]
        where = f"{esc(line.impl)} · {esc(mask_names.get(line.mask, line.mask))}"
        data.append(
            dict(
                type="scatter",
                x=list(line.seq_lens),
                y=list(line.tflops),
                mode="lines+markers",
                name=esc(line.impl),
                legendgroup=line.impl,
                showlegend=line.impl not in seen,
                line=dict(color=palette.line(IMPLS.index(line.impl)) if line.impl in IMPLS else palette.neutral),
                xaxis=f"x{suffix(panel)}",
                yaxis=f"y{suffix(panel)}",
                customdata=shares,
                hovertemplate=f"{where}<br>T=%{{x}}<br>%{{y:.4g}} TFLOP/s%{{customdata}}<extra></extra>",
            )
        )
        seen.add(line.impl)
    return data


def headline_figure(
    h: Headline,
    title: str,
    x_title: str,
    y_title: str,
    mask_names: Mapping[str, str],
    peak_label: str,
    share_word: str,
    y_max: float | None = None,
) -> go.Figure:
    """TFLOP/s against T (log) without a mask and causal, the peak dashed across both panels and labelled
    `peak_label`; `y_max` shares one y range among several devices' figures."""
    data = _traces(h, mask_names, share_word)
    axes = subplot_row([esc(mask_names.get(m, m)) for m in MASKS], SPACING)
    ts = sorted({t for line in h.lines for t in line.seq_lens})
    top = y_max or y_top([h])
    shapes = []
    for panel in (1, 2):
        k = suffix(panel)
        axes[f"xaxis{k}"].update(
            type="log", tickvals=ts, ticktext=[short_t(t) for t in ts], title=dict(text=esc(x_title))
        )
        y_title_k = dict(text=esc(y_title) if panel == 1 else "")  # one y range: the second panel's ticks would repeat
        axes[f"yaxis{k}"].update(type="linear", range=[0, top], title=y_title_k, showticklabels=panel == 1)
        if h.peak:
            shapes.append(rule(panel, y=h.peak, dash="dash", color=current().neutral))
            domain = axes[f"xaxis{k}"]["domain"]
            note = dict(x=domain[1], xref="paper", xanchor="right", y=h.peak, yref=f"y{k}", yanchor="bottom")
            axes["annotations"].append(dict(note, text=esc(peak_label), showarrow=False, font=dict(size=12)))
    return hang(line_figure(data, axes, title, PLOT_PX, legend=BELOW, hovermode="closest", shapes=shapes), PLOT_PX)
