"""Recorded, deterministic training of the recipes, step-wise with a callback and a cancel flag."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from attnlab.limits import TRAINED_LIVE_MAX_STEPS
from attnlab.trained.data import START, VOCAB, first_mask, repeating
from attnlab.trained.model import AttnOnly, Config
from attnlab.trained.scores import head_scores, split_losses


@dataclass(frozen=True)
class Recipe:
    """Everything that fixes a run: model shape, data, optimiser, schedule and seed."""

    n_layers: int
    n_heads: int = 4
    d_model: int = 64
    length: int = 64  # symbols per training sequence (the start marker comes on top)
    periods: tuple[int, int] = (4, 16)
    batch: int = 32
    lr: float = 3e-3
    steps: int = 1000
    seed: int = 0


RECIPES = {"induction-2l": Recipe(n_layers=2), "induction-1l": Recipe(n_layers=1)}
EVAL_PERIODS = (4, 12)  # the goals are measured on these periods
# A page's live run: the same model, on 32 symbols and with a larger step. The shipped 2-layer run changes
# between steps 240 and 400 (about 30-70 s here); this one changes near step 110-150 for seeds 0-3, in ~10 s.
LIVE_CHANGES = {"length": 32, "periods": EVAL_PERIODS, "lr": 1e-2}
SCORE_EVERY = 10  # a live run measures its heads' induction scores every this many steps


def config(r: Recipe) -> Config:
    """The model shape a recipe trains."""
    return Config(r.n_layers, r.n_heads, r.d_model, len(VOCAB), r.length + 1)


def with_start(ids: torch.Tensor) -> torch.Tensor:
    """Prefix every row with the start marker's id."""
    return torch.cat([ids.new_full((ids.size(0), 1), len(VOCAB)), ids], 1)


def checkpoint_steps(total: int) -> list[int]:
    """Step 0 (untrained), every 2 % of the run where induction forms (20-46 %), every 5-10 % elsewhere."""
    fractions = [0, 5, 10, 15, *range(20, 48, 2), 50, 60, 70, 80, 90, 100]
    grid = {round(total * f / 100) for f in fractions}
    return sorted(s for s in grid if 0 <= s <= total)


@torch.no_grad()
def measure(model: AttnOnly, ids: torch.Tensor, ablate=()) -> dict:
    """Losses, accuracies and every head's scores on the symbol ids (B, T)."""
    tokens = with_start(ids)
    logits, steps = model(tokens, ablate)
    out = split_losses(logits[:, :-1], ids, first_mask(ids))
    att = torch.stack([s.weights for s in steps], 1)  # (B, L, H, T, T)
    sc = head_scores(att, tokens)  # (L, H, 3)
    out["heads"] = {k: sc[..., i].tolist() for i, k in enumerate(("previous", "duplicate", "induction"))}
    return out


def eval_batch(seed: int = 12345, n: int = 256, length: int = 64) -> torch.Tensor:
    """A fixed batch of fresh sequences of periods 4-12 (never seen in training)."""
    gen = torch.Generator().manual_seed(seed)
    return repeating(n, length, EVAL_PERIODS, gen)


def save_checkpoint(model: AttnOnly, out: Path, step: int) -> None:
    """One safetensors file per checkpoint, named by its step."""
    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(tensors, str(out / f"step{step:05d}.safetensors"))


def train(
    name: str,
    out: Path | None = None,
    steps: int | None = None,
    seed: int | None = None,
    callback: Callable[[int, dict], None] | None = None,
    cancel: threading.Event | None = None,
    record: bool = True,
    changes: dict | None = None,
    score_every: int = 0,
) -> AttnOnly:
    """Train recipe NAME; write checkpoints and log.json to out; call callback(step, losses) per step.

    `changes` overrides recipe fields (a live run's); with `score_every`, every that many steps the callback's
    dict also has "induction": every head's induction score (L x H, flat) on a fixed probe batch.
    """
    r = RECIPES[name]
    r = Recipe(**{**asdict(r), **(changes or {}), "steps": steps or r.steps, "seed": r.seed if seed is None else seed})
    model = AttnOnly(config(r), torch.Generator().manual_seed(r.seed))  # a live run leaves the global RNG alone
    opt = torch.optim.AdamW(model.parameters(), lr=r.lr, weight_decay=0.01)
    gen = torch.Generator().manual_seed(r.seed + 1)
    saves = set(checkpoint_steps(r.steps)) if record and out is not None else set()
    evals, log = eval_batch(length=r.length), []
    probe = eval_batch(n=64, length=r.length) if score_every else None  # the live scores' fixed batch
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for step in range(r.steps + 1):
        if step in saves:
            save_checkpoint(model, out, step)
            log.append({"step": step, **measure(model, evals)})
        if step == r.steps or (cancel is not None and cancel.is_set()):
            break
        ids = repeating(r.batch, r.length, r.periods, gen)
        logits, _ = model(with_start(ids))
        loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), ids)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if callback is not None:
            with torch.no_grad():
                losses = split_losses(logits[:, :-1], ids, first_mask(ids))
                if probe is not None and (step + 1) % score_every == 0:
                    losses["induction"] = [x for row in measure(model, probe)["heads"]["induction"] for x in row]
                callback(step + 1, losses)
    if out is not None and record:
        meta = {"recipe": name, **asdict(r), "vocab": list(VOCAB), "start": START, "checkpoints": log}
        (out / "log.json").write_text(json.dumps(meta, indent=1))
    return model


def train_live(
    name: str,
    steps: int,
    callback: Callable[[int, dict], None],
    cancel: threading.Event | None = None,
    seed: int | None = None,
) -> AttnOnly:
    """A page's own short run of the recipe's live variant (LIVE_CHANGES): at most TRAINED_LIVE_MAX_STEPS steps,
    nothing written, cancellable, its heads' induction scores measured every SCORE_EVERY steps."""
    capped = min(int(steps), TRAINED_LIVE_MAX_STEPS)
    return train(
        name,
        None,
        capped,
        seed,
        callback=callback,
        cancel=cancel,
        record=False,
        changes=LIVE_CHANGES,
        score_every=SCORE_EVERY,
    )
