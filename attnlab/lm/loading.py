"""Where language models come from: the shipped runs by name, a folder, or a Hub id a server allows (contract 16).

A shipped run's folder (and one `python -m attnlab.train lm-zh --out DIR` writes) is a Hugging Face folder whose
model.safetensors is the last checkpoint, plus `checkpoints/stepNNNNNN.safetensors` for the earlier ones,
`log.json` (recipe, checkpoint steps, losses along training) and `metrics.json`. `allowed` (the page passes
`allowed_models()`, read from `ATTNLAB_LM_MODELS`) limits what a name may be; the library's own callers pass none.
A Hub id goes through `huggingface_hub` (config.json first, checked, then the weights), where the host reaches the
Hub; elsewhere the refusal says it cannot be fetched.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from attnlab.lm.checkpoint import read_config, read_model, weights_file
from attnlab.lm.language import LanguageModel

RUNS = Path(__file__).parent / "runs"
SHIPPED = ("zh", "en")
MODELS_ENV = "ATTNLAB_LM_MODELS"
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}")
HUB_FILES = ["config.json", "model.safetensors", "tokenizer.json", "chars.json"]


def allowed_models() -> list[str]:
    """The folders and Hub ids this server offers besides the shipped runs (ATTNLAB_LM_MODELS, comma-separated)."""
    return [m.strip() for m in os.environ.get(MODELS_ENV, "").split(",") if m.strip()]


def run_dir(name: str | Path) -> Path:
    """A shipped run's folder by name ("zh", "en"), or a folder a training run wrote (it holds metrics.json)."""
    folder = RUNS / str(name) if str(name) in SHIPPED else Path(name)
    if not (folder / "metrics.json").is_file():
        raise FileNotFoundError(f"no language-model run at {str(name)[:80]!r}")
    return folder


def run_metrics(name: str | Path) -> dict:
    """A run's metrics.json as a dict (contract 16's keys, and every head's shares)."""
    return json.loads((run_dir(name) / "metrics.json").read_text(encoding="utf-8"))


def run_steps(folder: Path) -> list[int]:
    """The checkpoint steps of a run folder (from log.json), [] for a plain model folder."""
    log = folder / "log.json"
    return [int(s) for s in json.loads(log.read_text(encoding="utf-8"))["steps"]] if log.is_file() else []


def checkpoint_path(folder: Path, step: int) -> Path:
    """The weights of one checkpoint: model.safetensors for the last, checkpoints/stepNNNNNN for the others."""
    return folder / "checkpoints" / f"step{step:06d}.safetensors"


def fetch(hub_id: str) -> Path:
    """A Hub model's files in the local cache, config.json checked before the weights come; ValueError otherwise."""
    try:
        from huggingface_hub import hf_hub_download, snapshot_download
    except ImportError:
        raise ValueError(f"{hub_id!r} cannot be fetched: the huggingface_hub package is not installed") from None
    try:
        folder = Path(hf_hub_download(hub_id, "config.json")).parent
        read_config(folder)  # refuses a model past the memory cap before its weights are downloaded
        return Path(snapshot_download(hub_id, allow_patterns=HUB_FILES))
    except ValueError:
        raise
    except Exception as err:  # no network, no such repository, a gated model: one line either way
        raise ValueError(
            f"{hub_id!r} cannot be fetched from the Hugging Face Hub here ({type(err).__name__})"
        ) from None


def resolve(name: str, allowed: list[str] | None) -> Path:
    """The folder a name stands for, refused when a server's list does not offer it."""
    if allowed is not None and name not in allowed:
        raise ValueError(f"{name[:80]!r} is not among the models this server offers")
    folder = Path(name)
    if folder.is_dir():
        return folder
    if HUB_ID.fullmatch(name):
        return fetch(name)
    raise ValueError(f"no model folder at {name[:80]!r}")


def load(name: str | Path, step: int | None = None, *, allowed: list[str] | None = None) -> LanguageModel:
    """ "zh" or "en" (a shipped run; `step` one of its checkpoints, None the last) or a Llama/Qwen2/Mistral folder.

    Every refusal is a ValueError with one line, raised before the weights are allocated.
    """
    name = str(name)
    folder = run_dir(name) if name in SHIPPED else resolve(name, allowed)
    steps = run_steps(folder)
    if step is not None and int(step) not in steps:
        raise ValueError(f"step {step} is not a checkpoint of {name[:80]!r}; checkpoints: {steps}")
    last = steps[-1] if steps else None
    step = last if step is None else int(step)
    weights = weights_file(folder) if step == last else checkpoint_path(folder, step)
    model, _, vocab = read_model(folder, weights)
    label = name if name in SHIPPED else folder.name
    return LanguageModel(model, vocab, name=label, folder=folder, steps=steps, step=step)
