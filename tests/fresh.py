"""Questions that need a process of their own, asked of one fresh interpreter instead of one interpreter each.

Seven tests used to start Python and import torch for themselves (about 3 s of CPU apiece). `answers()` starts
one interpreter, `python -m tests.fresh`, whose string hashing differs from the caller's, and asks it the
questions in `QUESTIONS` with the network blocked throughout. The order is what keeps each answer a fresh
process's: the core's imports come first, while nothing has imported Streamlit or Plotly; the figures bring
Plotly in, and the app's modules, last, bring Streamlit in; no other question imports either. A question that
fails is answered with its traceback, so only its own test fails. This module imports nothing heavy itself: the
fresh interpreter runs it as its main module.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import runpy
import socket
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable

from tests.layers import CORE, MODULES, ROOT

TOKENS_TEXT = "<BOS> I like you <EOS> 我喜欢你 😀 مرحبا"  # specials, CJK, an emoji and right-to-left text
CLASSROOM = dict(text="<BOS> I like you <EOS>", d_model=16, heads=4, causal=True, seed=123, positions=False)
REFERENCE_LIBRARIES = {"transformers", "sentence_transformers", "huggingface_hub", "sklearn"}
FAST_ARGS = ["--warmup", "1", "--min-reps", "2", "--max-reps", "3", "--min-time", "0", "--no-progress"]  # bench CLI
BENCH_ARGS = "--device cpu --seq-lens 8 --heads 2 --head-dim 4 --impls sdpa,tiled".split() + FAST_ARGS


def core_imports() -> list[str]:
    """Import every core module: which of Streamlit and Plotly came with them."""
    for name in CORE:
        importlib.import_module(name)
    return sorted({"streamlit", "plotly"} & set(sys.modules))


def minilm_offline() -> dict:
    """Load MiniLM from its package and run it: its tokens, and which reference libraries that imported."""
    from attnlab.pretrained import load_minilm

    run = load_minilm().run("Hello, world!")
    return {"tokens": list(run.tokens), "heavy": sorted(REFERENCE_LIBRARIES & set(sys.modules))}


def embedding_digest(text: str = TOKENS_TEXT) -> str:
    """SHA-256 of the embedding and the input matrix (positions on) of `text`, d_model 8, seed 3."""
    from attnlab.tokens import embed, input_matrix, tokenize

    x = embed(tokenize(text), 8, seed=3)
    y = input_matrix(tokenize(text), 8, 3, positions=True)
    return hashlib.sha256(x.numpy().tobytes() + y.numpy().tobytes()).hexdigest()


def embeddings() -> dict:
    """The digest, and how this process hashes a string (to show it hashes differently from the caller)."""
    return {"digest": embedding_digest(), "salted": hash("salted?")}


def classroom_questions() -> list[str]:
    """The ids of every question the presenter asks for the `CLASSROOM` link."""
    from attnlab.classroom.build import QUESTION_STEPS, questions_for_step
    from attnlab.pipeline import LabConfig, run_lab

    config = LabConfig(**CLASSROOM)
    result = run_lab(config)
    return [q.uid for n in QUESTION_STEPS for q in questions_for_step(n, config, result)]


def bench_as_a_module() -> dict:
    """`python -m attnlab.bench BENCH_ARGS --out FILE`, as -m runs it (runpy): its exit code and the file it wrote."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "m.json")
        sys.argv = ["attnlab.bench", *BENCH_ARGS, "--out", out]
        try:
            runpy.run_module("attnlab.bench", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as done:
            code = done.code or 0
        with open(out, encoding="utf-8") as f:
            return {"exit": code, "doc": json.load(f)}


def figures_imports() -> list[str]:
    """Import the notebook API's figures: whether Streamlit came with them."""
    figures = importlib.import_module("attnlab.figures")
    assert callable(figures.model_view)
    return sorted({"streamlit"} & set(sys.modules))


def app_modules_and_plotly() -> list:
    """Load Streamlit's chart element (it makes its own template Plotly's default), then import every attnlab
    module, the app's too: Plotly's defaults before and after."""
    import plotly.io as pio

    def defaults() -> list:
        return [pio.templates.default, sorted(pio.templates), pio.renderers.default]

    importlib.import_module("streamlit.elements.plotly_chart")
    before = defaults()
    for name in MODULES:
        if not name.endswith("__main__"):
            importlib.import_module(name)
    return [before, defaults()]


QUESTIONS: dict[str, Callable[[], object]] = {
    "core_imports": core_imports,  # first: nothing has imported Streamlit or Plotly yet
    "minilm_offline": minilm_offline,
    "embeddings": embeddings,
    "classroom_questions": classroom_questions,
    "bench_as_a_module": bench_as_a_module,
    "figures_imports": figures_imports,  # the figures bring Plotly in
    "app_modules_and_plotly": app_modules_and_plotly,  # last: it brings Streamlit in
}


def _refuse_network(*args, **kwargs):
    raise OSError("network used")


def main() -> None:
    """Answer every question in order and print the answers as one JSON object."""
    socket.socket.connect = _refuse_network
    found: dict[str, dict] = {}
    for name, question in QUESTIONS.items():
        try:
            found[name] = {"answer": question()}
        except Exception:
            found[name] = {"error": traceback.format_exc()}
    print(json.dumps(found))


def asked(hash_seed: str) -> dict[str, dict]:
    """Every question's answer (or traceback) from a fresh interpreter that hashes strings with `hash_seed`."""
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.fresh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def answers() -> dict[str, dict]:
    """The fresh interpreter's answers; it hashes with seed 1, or 2 if this process hashes like seed 1."""
    found = asked("1")
    if found["embeddings"].get("answer", {}).get("salted") == hash("salted?"):
        found = asked("2")
    return found


def answer(found: dict[str, dict], name: str):
    """One question's answer; its traceback as the failure if the question raised."""
    assert "error" not in found[name], found[name]["error"]
    return found[name]["answer"]


if __name__ == "__main__":
    main()
