"""The offline classroom pack as one HTML file: the sentence, the settings and every stage as an interactive heatmap.

It must open from disk with no network at all (DESIGN contract 6): Plotly's JavaScript is
embedded once, formulas are plain Unicode and HTML (MathJax or KaTeX would have to be
fetched), no font, script or stylesheet is linked, and a Content-Security-Policy refuses any
request the page might still try. Every piece of user text is HTML-escaped, so a token such
as `<img src=x onerror=alert(1)>` reads as text. No Streamlit here: the page passes its own
`t` as `tr`, so the pack speaks the viewer's language.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import plotly.io as pio
import plotly.offline

from attnlab.figures import grid_figure, matrix_figure, screen
from attnlab.pipeline import LabConfig, LabResult
from attnlab.stages import STEPS, Step, column_labels, dims_of, head_breaks

Translate = Callable[..., str]  # tr(key, **fields): the string for `key` in the pack's language

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"
)
PLOT_CONFIG = {"displaylogo": False, "responsive": True}
STYLE = """
body { font-family: system-ui, "Noto Sans", "Noto Sans CJK SC", "Microsoft YaHei", sans-serif; margin: 0 auto;
       max-width: 1200px; padding: 1.5rem; color: #1b1b1b; line-height: 1.5; font-size: 17px; }
h1 { font-size: 1.8rem; margin-bottom: .2rem; }
h2 { font-size: 1.35rem; margin: 2.2rem 0 .3rem; border-top: 1px solid #ddd; padding-top: 1rem; }
.sentence { font-size: 1.25rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.tokens code { background: #f1f3f5; border-radius: 4px; padding: 0 .3em; margin-right: .3em; }
table.settings { border-collapse: collapse; margin: .6rem 0; }
table.settings th, table.settings td { text-align: left; padding: .15rem 1rem .15rem 0; }
.formula { font-family: "Cambria Math", "STIX Two Math", "Latin Modern Math", serif; font-size: 1.2rem; }
.shape { color: #555; }
details { color: #444; margin: .3rem 0 .6rem; }
footer { margin-top: 2.5rem; color: #555; font-size: .95rem; }
"""
_SCALED_FORMULA = "S′<sub>h</sub> = S<sub>h</sub> / √d<sub>k</sub> = S<sub>h</sub> × {scale:.4f}"
_FORMULAS = {
    "q": "Q = X · W<sup>Q</sup>",
    "k": "K = X · W<sup>K</sup>",
    "v": "V = X · W<sup>V</sup>",
    "scores": "S<sub>h</sub> = Q<sub>h</sub> K<sub>h</sub><sup>⊤</sup>",
    "weights": "A<sub>h</sub> = softmax(S″<sub>h</sub>),&ensp;"
    "A<sub>ij</sub> = e<sup>S″<sub>ij</sub> − m<sub>i</sub></sup>"
    " / Σ<sub>j′</sub> e<sup>S″<sub>ij′</sub> − m<sub>i</sub></sup>,"
    "&ensp;m<sub>i</sub> = max<sub>j</sub> S″<sub>ij</sub>",
    "z": "Z<sub>h</sub> = A<sub>h</sub> V<sub>h</sub>",
    "concat": "Concat(Z<sub>1</sub>, …, Z<sub>H</sub>)",
    "output": "Output = Concat(Z<sub>1</sub>, …, Z<sub>H</sub>) · W<sup>O</sup>",
}


_RULES = {  # where M_ij = 0 under each rule beyond causal, in the rule's own numbers
    "window": "i − {w} &lt; j ≤ i",
    "sinks": "j ≤ i and (i − {w} &lt; j or j &lt; {s})",
    "prefix": "j &lt; {p} or j ≤ i",
    "documents": "doc(j) = doc(i) and j ≤ i",
}


def mask_html(result: LabResult, causal: bool) -> str:
    """M for the run's rule (and ALiBi's bias B before it), as HTML text."""
    rule = result.rule
    kind = rule.kind if rule is not None else ("causal" if causal else "full")
    if kind == "full":
        mask = "M = 0"
    elif kind == "causal":
        mask = "M<sub>ij</sub> = 0 (j ≤ i), −∞ (j &gt; i)"
    else:
        allowed = _RULES[kind].format(w=rule.window, s=rule.sinks, p=rule.prefix)
        mask = f"M<sub>ij</sub> = 0 ({allowed}), −∞ otherwise"
    if result.steps.alibi is None:
        return f"S″<sub>h</sub> = S′<sub>h</sub> + M,&ensp;{mask}"
    bias = "B<sub>ij</sub> = −m<sub>h</sub>·|i − j|"
    return f"S″<sub>h</sub> = S′<sub>h</sub> + B + M,&ensp;{bias},&ensp;{mask}"


def formula_html(stage: Step, config: LabConfig, result: LabResult) -> str:
    """The stage's formula as HTML text (sub/sup tags and Unicode symbols), filled in for this state."""
    if stage.name == "x":
        return "X = E + PE" if config.positions else "X = E"
    if stage.name == "scaled":
        scale = result.steps.heads.scale
        return _SCALED_FORMULA.format(scale=scale) if config.scaled else "S′<sub>h</sub> = S<sub>h</sub> × 1"
    if stage.name == "masked":
        return mask_html(result, config.causal)
    if stage.name == "scores" and result.steps.rope is not None:
        return "S<sub>ij</sub> = (R<sub>i</sub> q<sub>i</sub>) · (R<sub>j</sub> k<sub>j</sub>)"
    return _FORMULAS[stage.name]


def shape_text(stage: Step, result: LabResult) -> str:
    """The stage's shape in symbols and in numbers: (H, T, T) = (2, 6, 6)."""
    numbers = tuple(stage.matrix(result).shape)
    return f"({', '.join(dims_of(stage, result))}) = ({', '.join(map(str, numbers))})"


def stage_figure(stage: Step, result: LabResult, tr: Translate):
    """The stage as the Playground draws it: one heatmap, or one panel per head sharing a colour scale."""
    tokens, cols = result.tokens, column_labels(stage, result)
    square = stage.columns == "keys"
    kw = dict(
        kind=stage.kind,
        row_name=tr("stages.query") if square else tr("stages.token"),
        col_name=tr("stages.key") if square else tr("stages.dim"),
        blocked_text=tr("stages.blocked"),
    )
    tensor = stage.matrix(result).numpy()
    if stage.per_head:
        titles = [tr("lab.check_head", h=h + 1) for h in range(len(tensor))]
        return grid_figure(list(tensor), titles, tokens, cols, **kw)
    breaks = head_breaks(result, stage) if stage.head_blocks else []
    return matrix_figure(tensor, tokens, cols, col_breaks=breaks, **kw)


def _settings_rows(config: LabConfig, result: LabResult, tr: Translate) -> list[tuple[str, str]]:
    """(label, value) pairs for the settings table, values as plain text (escaped later)."""
    on_off = {True: tr("present.pack.on"), False: tr("present.pack.off")}
    scale = (
        tr("present.pack.scale_default", scale=f"{result.steps.heads.scale:.4f}")
        if config.scaled
        else tr("present.pack.scale_none")
    )
    rows = [
        (tr("present.pack.tokens"), str(len(result.tokens))),
        ("d_model", str(config.d_model)),
        (tr("common.heads"), str(config.heads)),
        ("d_k", str(result.steps.d_k)),
        (tr("common.seed"), str(config.seed)),
        (tr("lab.causal"), on_off[config.causal]),
        (tr("lab.pe"), on_off[config.positions]),
        (tr("lab.init"), tr(f"lab.init_{config.init}")),
        (tr("present.pack.scale"), scale),
    ]
    if config.edits:
        rows.append((tr("present.pack.edits"), tr("lab.edited_cells", n=len(config.edits))))
    return rows + _modern_rows(result, tr)


def _modern_rows(result: LabResult, tr: Translate) -> list[tuple[str, str]]:
    """The settings of contract 13 the run used, when any is on: key/value heads, RoPE, ALiBi, the mask's rule."""
    used = result.config
    if used is None or not used.modern:
        return []
    on_off = {True: tr("present.pack.on"), False: tr("present.pack.off")}
    rule = result.rule
    mask = tr(f"lab.mask_{rule.kind}")
    numbers = {"window": ("window",), "sinks": ("window", "sinks"), "prefix": ("prefix",)}.get(rule.kind, ())
    mask += "".join(f", {tr(f'lab.{name}')} = {getattr(rule, name)}" for name in numbers)
    total = max(1, rule.mask.numel())
    share = f"{rule.allowed / total:.0%}"
    return [
        (tr("lab.kv_heads"), str(used.n_kv_heads)),
        (tr("lab.rope"), tr(f"lab.rope_{used.rope}")),
        (tr("lab.alibi"), on_off[used.alibi]),
        (
            tr("lab.mask"),
            f"{mask}. {tr('stages.rule_count', allowed=rule.allowed, total=total, share=share)}",
        ),
    ]


def _section(stage: Step, config: LabConfig, result: LabResult, tr: Translate) -> str:
    """One stage: heading, formula, shape, explanation, folded teacher notes and the chart."""
    key = f"present.step.{stage.number}"
    chart = pio.to_html(
        stage_figure(stage, result, tr),
        include_plotlyjs=False,
        full_html=False,
        div_id=f"chart-{stage.number}",  # fixed ids: the same state always writes the same file
        config=PLOT_CONFIG,
    )
    e = html.escape
    return f"""
<section id="step-{stage.number}">
<h2>{stage.number}. {e(tr(key + ".title"))}</h2>
<p class="formula">{formula_html(stage, config, result)}</p>
<p class="shape"><strong>{e(tr("present.pack.shape"))}</strong>&ensp;{e(shape_text(stage, result))}</p>
<p>{e(tr(key + ".text"))}</p>
<details><summary>{e(tr("present.pack.notes"))}</summary>
<p>{e(tr(key + ".point"))}</p><p>{e(tr(key + ".misconception"))}</p></details>
{chart}
</section>"""


def pack_html(config: LabConfig, result: LabResult, *, app_url: str, tr: Translate, lang: str) -> str:
    """The whole self-contained page for one state; `app_url` is the live app's link to the same state."""
    if not result.tokens:
        raise ValueError("nothing to export: the text has no tokens")
    if not app_url.startswith(("http://", "https://")):
        raise ValueError(f"the link back to the app must be http(s), got {app_url[:40]!r}")
    e = html.escape
    settings = "\n".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in _settings_rows(config, result, tr))
    tokens = "".join(f"<code>{e(tok)}</code>" for tok in result.tokens)
    with screen.at(screen.DEFAULT_PX):  # a desktop's layout, wherever the pack was downloaded: it opens anywhere
        sections = "".join(_section(stage, config, result, tr) for stage in STEPS)
    title = tr("present.pack.title")
    return f"""<!doctype html>
<html lang="{e(lang)}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)}: {e(config.text[:80])}</title>
<style>{STYLE}</style>
<script>{plotly.offline.get_plotlyjs()}</script>
</head>
<body>
<header>
<h1>{e(title)}</h1>
<h3>{e(tr("present.pack.sentence"))}</h3>
<p class="sentence">{e(config.text)}</p>
<p class="tokens">{tokens}</p>
<h3>{e(tr("present.pack.settings"))}</h3>
<table class="settings">
{settings}
</table>
<p><a href="{e(app_url, quote=True)}" rel="noopener noreferrer">{e(tr("present.pack.open_live"))}</a></p>
<p>{e(tr("present.pack.offline"))}</p>
</header>
<main>{sections}
</main>
<footer><a href="{e(app_url, quote=True)}" rel="noopener noreferrer">{e(app_url)}</a></footer>
</body>
</html>
"""
