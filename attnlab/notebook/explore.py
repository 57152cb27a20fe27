"""The notebook recipes of the Explore pages: the Playground family, Cross-attention, the decoders, and the table.

The Real model and Attention file recipes are in `sources` (the table here names them). A recipe is data: which
URL scopes its page reads, the setup cell (the page's computation for those values, through the library), and
one figure cell per figure the page draws. Values reach the code only as literals (`lit`). `fix` applies the
fall-backs a page makes once its values are read (heads that must divide d_model, a head that must exist),
returning what it replaced, as the page says it.
"""

from __future__ import annotations

from typing import Any

from attnlab.limits import MAX_HEAD_PANELS, MAX_PANEL_CELLS, MAX_TOKENS
from attnlab.links import DECODER_MODELS, Replaced
from attnlab.notebook.cells import lit
from attnlab.notebook.recipe import Figure, Recipe
from attnlab.notebook.sources import attnfile_setup, real_setup, source_figures
from attnlab.params import divisor_at_most
from attnlab.stages import NAMES, step
from attnlab.tokens import tokenize


def shown_heads(choice: int, n_heads: int, t_len: int) -> tuple[int, ...]:
    """The heads a page's `head` value shows: one head for h >= 1, else a group sized as the page sizes it."""
    size = max(1, min(MAX_HEAD_PANELS, MAX_PANEL_CELLS // max(1, t_len * t_len)))
    groups = [tuple(range(lo, min(lo + size, n_heads))) for lo in range(0, n_heads, size)]
    return (choice - 1,) if choice >= 1 else groups[-choice]


def fix_heads(v: dict[str, Any], t_len: int) -> list[Replaced]:
    """Heads that do not divide d_model become the nearest divisor below; a head or group past the last, all."""
    out = []
    if v["d_model"] % v["heads"]:
        used = divisor_at_most(v["d_model"], v["heads"])
        out.append(Replaced("heads", str(v["heads"]), str(used), "heads_not_dividing"))
        v["heads"] = used
    size = max(1, min(MAX_HEAD_PANELS, MAX_PANEL_CELLS // max(1, t_len * t_len)))
    groups = -(-v["heads"] // size)
    if not (1 - groups <= v["head"] <= v["heads"]) or (groups == 1 and v["head"] < 0):
        out.append(Replaced("head", str(v["head"]), "0", "head_missing"))
        v["head"] = 0
    v["shown"] = shown_heads(v["head"], v["heads"], t_len)
    return out


def fix_lab(v: dict[str, Any]) -> list[Replaced]:
    """The Playground's fall-backs after its Params: heads, the head on screen, then contract 13's settings (the
    mask and causal switch agreeing, key/value heads dividing heads, what this text cannot honour), as the page."""
    from attnlab.links import settle_lab
    from attnlab.pipeline import LabConfig, settle

    tokens = tokenize(v["text"])[:MAX_TOKENS]
    out = fix_heads(v, len(tokens)) + settle_lab(v, v.get("link", {}))
    v["modern"] = {name: v[name] for name in ("kv_heads", "rope", "alibi", "mask", "window", "sinks", "prefix")}
    used, fallbacks = settle(LabConfig(heads=v["heads"], d_model=v["d_model"], **v["modern"]), tokens)
    v["modern_on"] = used.modern or bool(fallbacks)
    return out + [Replaced(f.name, f.asked, f.used, f.reason) for f in fallbacks]


def lab_setup(v: dict[str, Any]) -> str:
    """The Playground's run for these settings, and the stage drawer its pages share."""
    return (
        f"""from attnlab.figures import dim_labels, matrices_figure, matrix_figure, palette
from attnlab.pipeline import LabConfig, decode_edits, run_lab
from attnlab.stages import by_name, column_labels, head_breaks

palette.use({lit(v["palette"])})
text, d_model, heads, causal, seed = {lit(v["text"])}, {v["d_model"]}, {v["heads"]}, {v["causal"]}, {v["seed"]}
init, positions, shown = {lit(v["init"])}, {v["pe"]}, {lit(list(v["shown"]))}  # heads on screen, from 0
edits, _ = decode_edits({lit(v["edits"])}, d_model)
config = LabConfig(text, d_model, heads, causal, seed, init, positions, tuple(sorted(edits.items())){modern(v)})
result = run_lab(config)
tokens, d_k = result.tokens, d_model // heads
one = shown[0] if len(shown) == 1 and heads > 1 else None


def stage_figure(name):
    \"\"\"One stage as the page draws it: a panel per head shown, or (T, d_model) with a rule per head.\"\"\"
    stage = by_name(name)
    m = stage.matrix(result).numpy()
    if stage.per_head:
        titles = [f"Head {{h + 1}}" for h in shown]
        return matrices_figure([m[h] for h in shown], titles, tokens, column_labels(stage, result), kind=stage.kind)
    if name in ("q", "k", "v") and one is not None:
        part = getattr(result.steps.heads, name)[one].numpy()
        block = one if name == "q" else result.steps.kv_head(one)  # K, V: the key/value head it shares
        return matrix_figure(part, tokens, dim_labels(m.shape[1])[block * d_k : (block + 1) * d_k])
    breaks = [] if name == "x" else head_breaks(result, stage)
    return matrix_figure(m, tokens, dim_labels(m.shape[1]), col_breaks=breaks)
"""
        + (MODERN if v.get("modern_on") else "")
        + (WHATIF.format(change=lit(v["compare"])) if v.get("compare", "none") != "none" else "")
    )


def modern(v: dict[str, Any]) -> str:
    """Contract 13's settings as LabConfig keywords, when any is on (a classic link's notebook stays as it was)."""
    if not v.get("modern_on"):
        return ""
    return ", " + ", ".join(f"{name}={lit(value)}" for name, value in v["modern"].items())


MODERN = """

from attnlab.figures import modern
from attnlab.positions import alibi_slopes


def rope_figures():
    \"\"\"With RoPE: the first shown head's q and k before and after the rotation, and each pair's angle.\"\"\"
    h = shown[0]
    kv = result.steps.kv_head(h) + 1
    titles = [f"q, head {h + 1}", f"q rotated, head {h + 1}", f"k, K/V head {kv}", f"k rotated, K/V head {kv}"]
    return modern.rotation_figure(result.steps, h, tokens, titles), modern.angles_figure(result.steps, tokens)


def alibi_figure():
    \"\"\"With ALiBi: the bias each shown head adds to the scaled scores, titled with its slope.\"\"\"
    slopes = alibi_slopes(heads)
    titles = [f"Head {h + 1} · m = {slopes[h].item():.4g}" for h in shown]
    return modern.alibi_figure(result.steps, shown, tokens, titles)
"""


WHATIF = """

from attnlab.classroom.whatif import Change, compare
from attnlab.figures import grid_figure

what = compare(config, Change({change}))  # the state, and the state with the page's "Compare with…" change
pairs = {{pair.step.name: pair for pair in what.stages}}
head_shown = one if one is not None else shown[0]  # a per-head stage shows one head


def pair_figure(name):
    \"\"\"One stage of both runs side by side.\"\"\"
    pair = pairs[name]
    both = [m[head_shown] if pair.step.per_head else m for m in (pair.base, pair.changed)]
    cols = column_labels(pair.step, result)
    return grid_figure(both, ["this run", "with the change"], tokens, cols, kind=pair.step.kind)


def diff_figure(name):
    \"\"\"Their difference (None when the change leaves this stage as it was: the page then draws none).\"\"\"
    pair = pairs[name]
    if pair.unchanged:
        return None
    diff = pair.diff[head_shown] if pair.step.per_head else pair.diff
    breaks = head_breaks(result) if pair.step.head_blocks else []
    return matrix_figure(diff, tokens, column_labels(pair.step, result), col_breaks=breaks)
"""


def playground_figures(v: dict[str, Any]) -> tuple[Figure, ...]:
    """Every stage (RoPE's and ALiBi's figures inside theirs, as the page draws them); with a "Compare with…"
    change, each stage of both runs and their difference."""
    if v.get("compare", "none") == "none":
        return modern_figures(v, stage_figures(NAMES))
    return tuple(
        fig
        for name in NAMES
        for fig in (Figure(f"stages.{name}", f"pair_figure({name!r})"), Figure("whatif_diff", f"diff_figure({name!r})"))
    )


def stage_figures(names: tuple[str, ...]) -> tuple[Figure, ...]:
    return tuple(Figure(f"stages.{name}", f"stage_figure({name!r})") for name in names)


def modern_figures(v: dict[str, Any], figures: tuple[Figure, ...]) -> tuple[Figure, ...]:
    """The stage figures with RoPE's rotation and angles before the scores, ALiBi's bias before the mask."""
    if not v.get("modern_on"):
        return figures
    from attnlab.pipeline import LabConfig, settle

    used, _ = settle(LabConfig(v["text"], v["d_model"], v["heads"], **v["modern"]), tokenize(v["text"])[:MAX_TOKENS])
    extra = {
        "stages.scores": [Figure("rope_rotation", "rope_figures()[0]"), Figure("rope_angles", "rope_figures()[1]")]
        if used.rope != "none"
        else [],
        "stages.masked": [Figure("alibi_bias", "alibi_figure()")] if used.alibi else [],
    }
    return tuple(f for fig in figures for f in (*extra.get(fig.key, []), fig))


def neuron_setup(v: dict[str, Any]) -> str:
    """One query of one head taken apart (the Playground's run, or the Thinking Machines vectors)."""
    if v["preset"] == "thinking":
        return f"""from attnlab.anatomy.neuron import thinking_machines, trace
from attnlab.figures import dim_labels, matrix_figure, palette

palette.use({lit(v["palette"])})
example = thinking_machines()
tokens, n = example.tokens, trace(example.q, example.k, example.v, {v["tq"]}).neuron
"""
    return (
        lab_setup(v)
        + f"""
from attnlab.anatomy.neuron import trace

h, i = min({v["h"]}, heads) - 1, min({v["q"]}, len(tokens) - 1)  # the page's head (from 1) and query row
q, k, w = (getattr(result.steps.heads, x)[h] for x in ("q", "k", "v"))
n = trace(q, k, w, i, {"attn_mask=result.steps.heads.bias[h]" if v.get("modern_on") else "is_causal=causal"}).neuron
"""
    )


NEURON_FIGURES = (
    Figure("neuron_products", "matrix_figure(n.products.numpy(), tokens, dim_labels(n.products.size(-1)))"),
    Figure("neuron_weighted", "matrix_figure(n.weighted.numpy(), tokens, dim_labels(n.weighted.size(-1)))"),
)


def cross_setup(v: dict[str, Any]) -> str:
    return f"""from attnlab.anatomy.cross import CrossConfig, run_cross
from attnlab.figures import dim_labels, matrices_figure, matrix_figure, palette

palette.use({lit(v["palette"])})
config = CrossConfig({lit(v["src"])}, {lit(v["tgt"])}, {v["causal"]}, tuple({lit(v["pad"])}), {v["d_model"]}, \
{v["heads"]}, {v["seed"]})
result, shown = run_cross(config), {lit(list(v["shown"]))}
src, tgt, titles = result.source, result.target, [f"Head {{h + 1}}" for h in {lit(list(v["shown"]))}]
"""


def fix_cross(v: dict[str, Any]) -> list[Replaced]:
    return fix_heads(v, max(len(tokenize(v["src"])), len(tokenize(v["tgt"])), 1))


CROSS_FIGURES = (
    Figure(
        "cross_weights",
        'matrices_figure([result.cross.heads.weights[h].numpy() for h in shown], titles, tgt, src, kind="prob")',
    ),
    Figure("cross_output", "matrix_figure(result.cross.output.numpy(), tgt, dim_labels(config.d_model))"),
)


def decoder_setup(v: dict[str, Any]) -> str:
    return f"""import numpy as np

from attnlab import trained
from attnlab.figures import palette
from attnlab.figures.decoder import curves_figure, layer_heads_figure

palette.use({lit(v["palette"])})
name, asked = {lit(DECODER_MODELS[v["model"]])}, {v["step"]}
steps = list(trained.load(name).steps)
step = steps[-1] if asked == -1 else min(steps, key=lambda s: (abs(s - asked), s))  # the nearest checkpoint
decoder = trained.load(name, step)
symbols = {lit(v["seq"])}.split()
run = decoder.run(symbols)
tokens, log = list(run.tokens), list(decoder.log["checkpoints"])
"""


def fix_decoder(v: dict[str, Any]) -> list[Replaced]:
    """A step that is no checkpoint becomes the nearest one, as the page replaces it (and says so)."""
    from attnlab import trained  # the shipped runs' checkpoints: read from their directory, no weights loaded

    steps = list(trained.load(DECODER_MODELS[v["model"]]).steps)
    if v["step"] == -1 or v["step"] in steps:
        return []
    used = min(steps, key=lambda s: (abs(s - v["step"]), s))
    return [Replaced("step", str(v["step"]), str(used), "not_checkpoint")]


def decoder_figures(v: dict[str, Any]) -> tuple[Figure, ...]:
    n_layers = 2 if v["model"] == "2l" else 1
    grids = tuple(
        Figure(
            "decoder_layer",
            f"layer_heads_figure(np.asarray(run.attentions)[{layer}], "
            f'[f"{{{layer} + 1}}.{{h + 1}}" for h in range(decoder.n_heads)], tokens, "query", "key")',
        )
        for layer in range(n_layers)
    )
    curves = Figure(
        "decoder_losses",
        "curves_figure([r['step'] for r in log], [('first', [r['loss_first'] for r in log]), "
        "('repeat', [r['loss_repeat'] for r in log])], step, 'loss', 'step', 'nats')",
    )
    scores = Figure(
        "decoder_scores",
        "heads = [(lay, h) for lay in range(decoder.n_layers) for h in range(decoder.n_heads)]\n"
        "series = [(f'{lay + 1}.{h + 1}', [r['heads']['induction'][lay][h] for r in log]) for lay, h in heads]\n"
        "curves_figure([r['step'] for r in log], series, step, 'induction score', 'step', 'score', (0, 1))",
    )
    return (*grids, curves, scores)


MULTIHEAD_QH = Figure(
    "multihead_qh",
    'matrices_figure([result.steps.heads.q[h].numpy() for h in shown], [f"Head {h + 1}" for h in shown], tokens, '
    "dim_labels(d_k))",
)
LAB_SCOPES = ("lab", "whatif")
EXPLORE: dict[str, Recipe] = {
    "playground": Recipe("playground", LAB_SCOPES, lab_setup, playground_figures, fix_lab),
    "present": Recipe(
        "present",
        (*LAB_SCOPES, "present"),
        lab_setup,
        lambda v: modern_figures(v, stage_figures((step(v["step"]).name,))),
        fix_lab,
    ),
    "multihead": Recipe(
        "multihead",
        ("lab", "mh"),
        lambda v: lab_setup({**v, "shown": tuple(range(v["heads"]))}),
        lambda v: (*stage_figures(("q",)), MULTIHEAD_QH, *stage_figures(("weights", "concat", "output"))),
        fix_lab,
    ),
    "neuron": Recipe("neuron", ("lab", "neuron"), neuron_setup, lambda v: NEURON_FIGURES, fix_lab),
    "cross": Recipe("cross", ("cross",), cross_setup, lambda v: CROSS_FIGURES, fix_cross),
    "real-model": Recipe("real_model", ("real",), real_setup, source_figures("real")),
    "decoder": Recipe("decoder", ("decoder",), decoder_setup, decoder_figures, fix_decoder),
    "attention-file": Recipe("attention_file", ("attnfile",), attnfile_setup, source_figures("file")),
}
