"""The notebook recipe of the Language model page, for the link's model, checkpoint, text, head and cache rule.

It draws the painted text, the top ten (the sampler's temperature, top-k and top-p), every head, one head's stages,
the sink experiment and the run along training; and the sections the link opens (`open`): the branches, the logit
lens, the attribution (contract 19).

The link is read as the page reads it (`attnlab.links.lm.settle_lm`: the model of the link's language when it names
none, a model the server does not offer replaced; the nearest checkpoint; an empty text the model's first text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnlab.links import Replaced
from attnlab.notebook.cells import lit
from attnlab.notebook.recipe import Figure, Recipe
from attnlab.notebook.sources import real_stage
from attnlab.stages import NAMES

TRAINING = ("lm_losses", "lm_copy", "lm_heads")  # drawn for a model that comes with its training run


def folder_of(name: str) -> Path | None:
    """The folder a shipped run or a local model folder is in (None for a Hub id: nothing is fetched here)."""
    from attnlab.lm import SHIPPED, run_dir

    if name in SHIPPED:
        try:
            return run_dir(name)
        except FileNotFoundError:
            return None
    return Path(name) if Path(name).is_dir() else None


def fix_lm(v: dict[str, Any]) -> list[Replaced]:
    """The page's fall-backs: the model and text (settle_lm), an empty text, the nearest checkpoint, the layer and
    head past the model's own. Reads the folder's config.json and log.json only (no weights)."""
    from attnlab.links.lm import nearest, settle_lm
    from attnlab.lm.checkpoint import read_config
    from attnlab.lm.loading import run_steps
    from attnlab.lmlab.texts import first_text

    out = [Replaced(*bad) for bad in settle_lm(v, v["link"])]
    if not v["text"].strip():
        used = first_text(v["model"] if v["model"] in ("zh", "en") else v["lang"])
        out.append(Replaced("text", v["text"], used, "empty"))
        v["text"] = used
    folder = folder_of(v["model"])
    v["steps"] = run_steps(folder) if folder is not None else []
    if v["steps"]:
        used = nearest(v["steps"], v["step"])
        if v["step"] not in (-1, used):
            out.append(Replaced("step", str(v["step"]), str(used), "not_checkpoint"))
        v["step"] = used
    if folder is not None:
        cfg = read_config(folder)
        for name, most in (("layer", cfg.num_hidden_layers), ("head", cfg.num_attention_heads)):
            if v[name] > most:
                out.append(Replaced(name, str(v[name]), str(most), "out_of_range"))
                v[name] = most
    return out


def lm_setup(v: dict[str, Any]) -> str:
    step = v["step"] if v["steps"] else None
    return f"""import numpy as np

from attnlab import lm as lmlib
from attnlab.figures import dim_labels, matrices_figure, matrix_figure, model_view, palette
from attnlab.figures.decoder import curves_figure
from attnlab.figures.kvcache import kept_figure
from attnlab.figures.lm import loss_text_figure, parts_figure, stream_figure, top_figure
from attnlab.figures.lm_grids import branches_figure, lens_figure
from attnlab.lmlab import branching, finder, forming, history, reading, stages, streaming, texts

palette.use({lit(v["palette"])})
name, step = {lit(v["model"])}, {step!r}
model = lmlib.load(name, step)
text = {lit(v["text"])}
got = reading.read(model, text)  # one pass: each character's loss, the first guesses, every head's weights
layer, head = min({v["layer"]}, model.n_layers) - 1, min({v["head"]}, model.n_heads) - 1  # from 0
q = {v["q"]} if {v["q"]} < got.n_tokens else 0  # 0: after the whole text; i: the prediction made for token i
row = got.n_tokens - 1 if q == 0 else q - 1  # the position whose next character is predicted
temperature, top_k, top_p, seed = {v["temperature"]!r}, {v["top_k"]!r}, {v["top_p"]!r}, {v["seed"]}
best = reading.top_at(model, got.ids, row, 10, temperature, top_k, top_p)
if {v["gen"]}:
    made = model.generate(text, {v["gen"]}, temperature, seed, top_k=top_k, top_p=top_p)
    print("generated:", repr(made.text), "greedy at each step:", repr(model.decode([s.argmax for s in made.steps])))
tr = lmlib.trace(model, got.ids)  # the same pass, its residual stream taken apart: the lens and the attribution
target, branch, temps = {lit(v["target"])}, {lit(v["branch"])}, {v["temps"]!r}
try:
    token = model.token_id(target) if target else forming.likeliest(model, tr, row)
except ValueError:  # not one token of the vocabulary: the predicted one, as on the page
    token = forming.likeliest(model, tr, row)
scores = finder.head_scores(got.attentions, got.pieces, got.lead)
have = {{k: g.numpy() for k, g in scores.items() if g is not None}}
rows = [f"layer {{i + 1}}" for i in range(model.n_layers)]
cols = [str(h + 1) for h in range(model.n_heads)]
att = stages.layer_steps(model, got.ids, layer)  # every stage of the chosen layer on the real weights
tokens = list(got.labels)
lang = name if name in ("zh", "en") else texts.language_of(model, {lit(v["lang"])})
ids = tuple(model.encode(texts.held_out(lang)))  # the held-out passage, read past the model's length on purpose
window, sinks = {v["window"]}, {v["sinks"] or 4}
runs = [streaming.stream(model, ids), streaming.stream(model, ids, window), streaming.stream(model, ids, window, sinks)]
names = ["whole cache", f"window {{window}}", f"window {{window}} + {{sinks}} sinks"]
log = history.logged(model.folder)
"""


SECTIONS = {  # the sections a link opens (`open`), as the page draws them
    "branches": Figure(
        "lm_branches",
        "made = branching.branch(model, text, branch, temps, seed, top_k, top_p)\n"
        "chars = [[s.token for s in r.steps] for r in made.rows]\n"
        "probs = np.array([[s.probs[s.token_id] for s in r.steps] for r in made.rows])\n"
        "greedy = [[model.token(s.argmax) for s in r.steps] for r in made.rows]\n"
        "greedy_p = np.array([[s.probs[s.argmax] for s in r.steps] for r in made.rows])\n"
        "off = np.array([[s.token_id != s.argmax for s in r.steps] for r in made.rows])\n"
        "sentence = '{name}, %{customdata[2]}: drew %{customdata[3]} (%{customdata[4]:.2f}), greedy %{customdata[5]}'\n"
        "branches_figure(chars, probs, (greedy, greedy_p, off), [f'T={t:g}' for t in temps], sentence, made.parted, "
        "16, None, 'probability', 'not the greedy choice')",
    ),
    "lens": Figure(
        "lm_lens",
        "grid = forming.lens_grid(model, tr, got.ids)\n"
        "names = ['embedding', *(f'layer {i}' for i in range(1, model.n_layers + 1))]\n"
        "tops = [[model.token(i) for i in line] for line in grid.top]\n"
        "first = np.zeros(grid.top.shape, bool)\n"
        "first[:, :-1] = grid.rank == 1\n"
        "cell = '{name}, after %{customdata[1]}: %{customdata[2]} (%{customdata[3]:.2f})'\n"
        "sentences = (cell + '; next %{customdata[4]} ranks %{customdata[5]}', cell)\n"
        "lens_figure(list(got.labels), tops, grid.prob, (grid.rank, grid.actual, first), names, sentences, 'text', "
        "16, None, row, 'probability')",
    ),
    "attribution": Figure(
        "lm_parts",
        "parts, logit = forming.pushes(model, tr, row, token)\n"
        "kinds = [{'embed': 0, 'head': 1, 'mlp': 2}.get(r.kind, 3) for r in parts]\n"
        "labels = [r.kind if r.layer is None else f'{r.layer + 1}.{r.head + 1}' if r.kind == 'head' "
        "else f'{r.kind} {r.layer + 1}' for r in parts]\n"
        "parts_figure(labels, [r.value for r in parts], kinds, labels, [None] * len(parts), "
        "['embedding', 'heads', 'MLPs', 'other'], "
        "f'{model.token(token)!r}: the parts sum to {sum(r.value for r in parts):.3f}, its logit {logit:.3f}', "
        "'contribution to the logit')",
    ),
}
FIGURES = (
    Figure(
        "lm_text",
        "loss_text_figure(got.labels[1:], got.losses, got.guesses, 16, q - 1 if q else None, 'loss', 'expected')",
    ),
    Figure(
        "lm_top",
        "top_figure(list(best.tokens), best.probs, best.tempered, "
        "('model', f'sampler: temperature {temperature}, top-k {top_k}, top-p {top_p}'), 'next character')",
    ),
    Figure("lm_model", "model_view(got.source(), picked=(layer, head))"),
    Figure("lm_scores", "matrices_figure(list(have.values()), list(have), rows, cols, kind='prob', text=True)"),
)
AFTER = (
    Figure(
        "lm_contribution",
        "mine = stages.contribution(att, model, layer, head)\n"
        "matrix_figure(mine.numpy(), tokens, dim_labels(mine.size(-1)))",
    ),
    Figure(
        "lm_stream",
        "stream_figure([(n, streaming.running_mean(r.losses, 32)) for n, r in zip(names, runs)], "
        "[(window + sinks, 'evicting')], 'loss along the held-out passage', 'position', 'nats')",
    ),
    Figure(
        "lm_cache",
        "kept_figure(np.stack([r.last_weights[layer, head] for r in runs]), names, "
        "[str(i) for i in range(len(ids))], np.stack([r.kept for r in runs]), 'evicted', kind='prob', "
        "text=False)",
    ),
)
TRAINING_FIGURES = (
    Figure(
        "lm_losses",
        "curves_figure([r['step'] for r in log], [('held-out', [history.held_out_of(r) for r in log])], "
        "model.step, 'held-out loss', 'step', 'nats')",
    ),
    Figure(
        "lm_copy",
        "keys = ['copy_loss_first', 'copy_loss_second', 'copy_passage_first', 'copy_passage_second']\n"
        "curves_figure([r['step'] for r in log], [(k, [r[k] for r in log]) for k in keys], model.step, "
        "'copying', 'step', 'nats')",
    ),
    Figure(
        "lm_heads",
        "marks = history.along_training(lambda s: lmlib.load(name, s), model.steps, "
        "history.probe_of(texts.first_text(lang)))\n"
        "series = [(f'{a + 1}.{h + 1}', [c.scores['induction'][a, h] for c in marks]) "
        "for a in range(model.n_layers) for h in range(model.n_heads)]\n"
        "curves_figure([c.step for c in marks], series, model.step, 'induction', 'step', 'score', "
        "(0, 1))",
    ),
)


def lm_figures(v: dict[str, Any]) -> tuple[Figure, ...]:
    stages = tuple(Figure(f"stages.{name}", real_stage(name, x="att.x_q")) for name in NAMES)
    opened = tuple(SECTIONS[name] for name in SECTIONS if name in v["open"])
    return (*FIGURES, *opened, *stages, *AFTER, *(TRAINING_FIGURES if v["steps"] else ()))


LM_RECIPES: dict[str, Recipe] = {"lm": Recipe("lm", ("lm",), lm_setup, lm_figures, fix_lm)}
