"""The notebook recipes of the Explore pages: the Playground family, cross-attention, MiniLM, decoders, files.

A recipe is data: which URL scopes its page reads, the setup cell (the page's computation for those values,
through the library), and one figure cell per figure the page draws. Values reach the code only as literals
(`lit`). `fix` applies the fall-backs a page makes once its values are read (heads that must divide d_model,
a head that must exist), returning what it replaced, as the page says it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnlab.limits import MAX_HEAD_PANELS, MAX_PANEL_CELLS, MAX_TOKENS
from attnlab.links import DECODER_MODELS, Replaced
from attnlab.notebook.cells import lit
from attnlab.params import divisor_at_most
from attnlab.stages import NAMES, step
from attnlab.tokens import tokenize


@dataclass(frozen=True)
class Figure:
    """One figure cell: its sentence (`notebook.<key>`, or `stages.<name>` for a stage) and the code that draws it."""

    key: str
    code: str
    when: Callable[[dict[str, Any]], bool] = lambda v: True


@dataclass(frozen=True)
class Recipe:
    """How one page's figures are rebuilt: its scopes, its setup cell, its figures, its late fall-backs."""

    file: str  # the registry's file name: its title is nav.<file>
    scopes: tuple[str, ...]
    setup: Callable[[dict[str, Any]], str]
    figures: Callable[[dict[str, Any]], tuple[Figure, ...]]
    fix: Callable[[dict[str, Any]], list[Replaced]] = field(default=lambda v: [])


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
    """The Playground's fall-backs after its Params: heads and the head on screen."""
    return fix_heads(v, min(len(tokenize(v["text"])), MAX_TOKENS))


def lab_setup(v: dict[str, Any]) -> str:
    """The Playground's run for these settings, and the stage drawer its pages share."""
    return f"""from attnlab.figures import dim_labels, matrices_figure, matrix_figure, palette
from attnlab.pipeline import LabConfig, decode_edits, run_lab
from attnlab.stages import by_name, column_labels, head_breaks

palette.use({lit(v["palette"])})
text, d_model, heads, causal, seed = {lit(v["text"])}, {v["d_model"]}, {v["heads"]}, {v["causal"]}, {v["seed"]}
init, positions, shown = {lit(v["init"])}, {v["pe"]}, {lit(list(v["shown"]))}  # heads on screen, from 0
edits, _ = decode_edits({lit(v["edits"])}, d_model)
result = run_lab(LabConfig(text, d_model, heads, causal, seed, init, positions, tuple(sorted(edits.items()))))
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
        return matrix_figure(part, tokens, dim_labels(d_model)[one * d_k : (one + 1) * d_k])
    breaks = [] if name == "x" else head_breaks(result)
    return matrix_figure(m, tokens, dim_labels(d_model), col_breaks=breaks)
"""


def stage_figures(names: tuple[str, ...]) -> tuple[Figure, ...]:
    return tuple(Figure(f"stages.{name}", f"stage_figure({name!r})") for name in names)


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
n = trace(q, k, w, i, is_causal=causal).neuron
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


HEAD_MAP = (
    "matrix_figure(as_array(source.attentions[layer, head]), list(source.tokens), list(source.tokens_k),\n"
    '              kind="prob", highlight_row=query)'
)
SOURCE_VIEWS = {  # the inspector's views (the `view` in the link): what each draws
    "model": (("model", "model_view(source, picked=(layer, head))"),),
    "head": (("head_map", HEAD_MAP), ("head_lines", "head_view(source, layer, head, query, key)")),
    "qk": (("qk", "query_key_map(source, layer, head, query or 0, causal=source.causal)"),),
    "finder": (
        (
            "finder",
            "grid = head_scores(source.attentions, source.tokens).values.numpy()[PATTERNS.index('previous')]\n"
            "matrix_figure(grid, [f'layer {i + 1}' for i in range(n_layers)], [str(h + 1) for h in range(n_heads)],\n"
            '              kind="prob", text=True)',
        ),
    ),
    "rollout": (
        ("raw", 'matrix_figure(as_array(source.attentions[layer]).mean(axis=0), tokens, tokens, kind="prob")'),
        ("rollout", 'matrix_figure(rollout(source.attentions).numpy()[layer], tokens, tokens, kind="prob")'),
    ),
}
REAL_AFTER = ("attention_norm", "ffn_activation", "output")


def real_stage(name: str) -> str:
    """One stage of the chosen real head, as the page draws it (that head's slice where the stage is per head)."""
    if name in ("x", "concat", "output"):
        m = {"x": "steps.x", "concat": "att.concat", "output": "att.output"}[name]
        return f"matrix_figure({m}.numpy(), tokens, dim_labels({m}.size(-1)))"
    part = {"z": "output"}.get(name, name)
    kind = ', kind="prob"' if name == "weights" else ""
    cols = "tokens" if name in ("scores", "scaled", "masked", "weights") else "dim_labels(att.d_k)"
    return f"matrix_figure(att.heads.{part}[head].numpy(), tokens, {cols}{kind})"


def source_figures(prefix: str) -> Callable[[dict[str, Any]], tuple[Figure, ...]]:
    """The figures of the view the link names, as the shared inspector (or the Real model page) draws them."""

    def figures(v: dict[str, Any]) -> tuple[Figure, ...]:
        if v["view"] == "stages":
            stages = tuple(Figure(f"stages.{name}", real_stage(name)) for name in NAMES)
            after = tuple(
                Figure(
                    f"real_after_{key}", f"matrix_figure(steps.{key}.numpy(), tokens, dim_labels(steps.{key}.size(-1)))"
                )
                for key in REAL_AFTER
            )
            return stages + after
        if v["view"] == "similarity":
            return (
                Figure("real_similarity", "matrix_figure(both, ['A', 'B'], dim_labels(both.shape[1]), text=False)"),
            )
        return tuple(Figure(f"{prefix}_{key}", code) for key, code in SOURCE_VIEWS[v["view"]])

    return figures


SOURCE_PICKS = """n_layers, n_heads = source.attentions.shape[:2]
layer, head = min({layer}, n_layers) - 1, min({head}, n_heads) - 1  # from 0; past the model's own: its last
query = {q} - 1 if 0 < {q} <= len(source.tokens) else None  # the followed query row (None: every query)
key = {k} - 1 if 0 < {k} <= len(source.tokens_k) else None
tokens = list(source.tokens)
"""


def real_setup(v: dict[str, Any]) -> str:
    return (
        f"""import numpy as np

from attnlab.figures import dim_labels, head_view, matrix_figure, model_view, palette, query_key_map
from attnlab.figures.attnfile import as_array
from attnlab.pretrained import PATTERNS, head_scores, load_minilm, rollout
from attnlab.sources import from_encoder_run

palette.use({lit(v["palette"])})
encoder = load_minilm()
run = encoder.run({lit(v["text"])})
source = from_encoder_run(encoder, run)
"""
        + SOURCE_PICKS.format(layer=v["layer"], head=v["head"], q=v["q"], k=0)
        + f"""steps = encoder.layer_steps(run, layer)  # the chosen layer, for a real head's stages
att = steps.attention
both = np.stack([run.embedding.numpy(), encoder.run({lit(v["text_b"])}).embedding.numpy()])  # (2, 384): A, B
"""
    )


def attnfile_setup(v: dict[str, Any]) -> str:
    head = f"""from attnlab import attnfile
from attnlab.attnexamples import EXAMPLES
from attnlab.figures import head_view, matrix_figure, model_view, palette, query_key_map
from attnlab.figures.attnfile import as_array
from attnlab.pretrained import PATTERNS, head_scores, rollout

palette.use({lit(v["palette"])})
"""
    if v["source"] == "upload":
        load = """FILE = "attention.safetensors"  # the file you uploaded on the page: put its path here
with open(FILE, "rb") as f:
    source = attnfile.load(FILE, f.read())
"""
    else:
        load = f"source = EXAMPLES[{lit(v['source'])}].build({lit(v['text'])})\n"
    return head + load + SOURCE_PICKS.format(layer=v["layer"], head=v["head"], q=v["q"], k=v["k"])


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


LAB_SCOPES = ("lab", "whatif")
EXPLORE: dict[str, Recipe] = {
    "playground": Recipe("playground", LAB_SCOPES, lab_setup, lambda v: stage_figures(NAMES), fix_lab),
    "present": Recipe(
        "present", (*LAB_SCOPES, "present"), lab_setup, lambda v: stage_figures((step(v["step"]).name,)), fix_lab
    ),
    "multihead": Recipe(
        "multihead",
        ("lab", "mh"),
        lambda v: lab_setup({**v, "shown": tuple(range(v["heads"]))}),
        lambda v: stage_figures(("q", "weights", "z", "concat", "output")),
        fix_lab,
    ),
    "neuron": Recipe("neuron", ("lab", "neuron"), neuron_setup, lambda v: NEURON_FIGURES, fix_lab),
    "cross": Recipe("cross", ("cross",), cross_setup, lambda v: CROSS_FIGURES, fix_cross),
    "real-model": Recipe("real_model", ("real",), real_setup, source_figures("real")),
    "decoder": Recipe("decoder", ("decoder",), decoder_setup, decoder_figures),
    "attention-file": Recipe("attention_file", ("attnfile",), attnfile_setup, source_figures("file")),
}
