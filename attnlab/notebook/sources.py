"""The notebook recipes of the pages that show an attention source: Real model (MiniLM) and Attention file.

The link's `view` picks the figures, as the shared inspector (`attnlab/ui/parts/inspector.py`) and the Real
model page draw them: model view, head view, query–key map, head finder, rollout, and for MiniLM a real head's
stages and the similarity of two sentences.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attnlab.notebook.cells import lit
from attnlab.notebook.recipe import Figure
from attnlab.stages import NAMES

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


def real_stage(name: str, x: str = "steps.x") -> str:
    """One stage of the chosen real head, as the page draws it (that head's slice where the stage is per head); `x`
    names the notebook's variable that holds the layer's input."""
    if name in ("x", "concat", "output"):
        m = {"x": x, "concat": "att.concat", "output": "att.output"}[name]
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
