"""Training the shipped language models: recipes, the data they read, checkpoints, log.json and metrics.json.

A recipe is fixed by its fields: shape, corpus, steps, schedule, seed and how copying is taught. The corpus text is
cut into random windows of `context` characters, each after <bos>. Copying (in-context repetition) is taught two
ways, both data only: a share of the rows are the trained decoders' kind (random characters repeating with a period
drawn per segment), `periodic_share` of them in the first `periodic_until` steps and `later_share` after, and a share
`repeat_share` of the text windows carry a random span of 8 to 48 characters written twice. The trials (issue 52's
closing note) found that a pure periodic first phase makes a 2-layer model copy by step 300, and that text alone
afterwards unlearns it: the shipped recipes keep a fifth of the rows periodic to the end. A fixed number of steps
sized from measured throughput keeps the run within 15 minutes on two quiet cores. Checkpoints are stored in
float16 (model.safetensors the last, checkpoints/ the others) to keep six within 8 MB; metrics.json is measured
on the stored float16 weights read back, so it is what the shipped model does.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from attnlab.bench.busy import busy_cpu_s, load_1m
from attnlab.lm.checkpoint import save_folder, save_weights
from attnlab.lm.config import LMConfig
from attnlab.lm.corpus import Corpus, regular_poems
from attnlab.lm.language import LanguageModel
from attnlab.lm.loading import checkpoint_path, load
from attnlab.lm.metrics import copying, measure, model_loss, ngram_losses
from attnlab.lm.model import Llama
from attnlab.lm.vocab import CharVocab

STORE_DTYPE = "float16"
LOG_WINDOWS = 64  # held-out windows each checkpoint's loss in log.json is measured on (metrics.json: all of them)


@dataclass(frozen=True)
class LMRecipe:
    """Everything that fixes one run."""

    lang: str
    layers: int = 4
    d_model: int = 128
    heads: int = 4
    kv_heads: int = 2
    ffn: int = 256
    context: int = 256
    vocab_cap: int | None = None
    theta: float = 10000.0
    batch: int = 16
    steps: int = 2000
    lr: float = 3e-3
    warmup: int = 100
    min_lr: float = 0.1  # the cosine schedule ends at this share of lr
    weight_decay: float = 0.1
    periodic_until: int = 0  # the first phase's steps
    periodic_share: float = 0.0  # its share of periodic rows
    periods: tuple[int, int] = (4, 32)  # their period range
    segment: int = 0  # periodic rows are independent segments of this many characters (0: one per row)
    later_share: float = 0.0  # the same after the first phase
    later_periods: tuple[int, int] = (4, 32)
    later_segment: int = 0
    repeat_share: float = 0.0  # text windows that carry a random span written twice
    alphabet: int = 0  # periodic rows draw from this many of the most frequent characters (0: every character)
    qk_std: float = 0.02  # the query and key projections' initial scale (larger: sharper attention from the start)
    checkpoints: tuple[float, ...] = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
    seed: int = 0


def config(r: LMRecipe, vocab_size: int) -> LMConfig:
    """The model shape a recipe trains (transformers' Llama defaults for what it does not set)."""
    return LMConfig(
        vocab_size=vocab_size,
        hidden_size=r.d_model,
        intermediate_size=r.ffn,
        num_hidden_layers=r.layers,
        num_attention_heads=r.heads,
        num_key_value_heads=r.kv_heads,
        head_dim=r.d_model // r.heads,
        rope_theta=r.theta,
        max_position_embeddings=r.context,
        bos_token_id=0,
    )


def init(model: Llama, gen: torch.Generator, qk_std: float = 0.02) -> None:
    """Normal(0, 0.02) weights as transformers initialises a Llama, the residual outputs scaled by 1/sqrt(2L), the
    query and key projections at `qk_std`."""
    scale = 1 / math.sqrt(2 * model.cfg.num_hidden_layers)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("layernorm.weight") or name.endswith("norm.weight"):
                p.fill_(1.0)
            else:
                std = 0.02 * (scale if name.endswith(("o_proj.weight", "down_proj.weight")) else 1.0)
                std = qk_std if name.endswith(("q_proj.weight", "k_proj.weight")) else std
                p.copy_(torch.randn(p.shape, generator=gen) * std)


class Batches:
    """Training sequences: text windows, some with a repeated random span, and early on periodic random strings."""

    def __init__(self, r: LMRecipe, stream: np.ndarray, vocab_size: int):
        self.r, self.stream, self.v = r, stream, vocab_size
        self.rng = np.random.default_rng(r.seed + 1)

    def periodic(self, periods: tuple[int, int], segment: int) -> np.ndarray:
        """Random characters (distinct within a period drawn from `periods`) repeated, in segments of `segment`
        characters (each its own period and characters) up to the context's length."""
        t, n = self.r.context, segment or self.r.context
        parts = []
        for _ in range(-(-t // n)):
            p = int(self.rng.integers(periods[0], periods[1] + 1))
            block = self.rng.choice(np.arange(2, min(self.v, 2 + (self.r.alphabet or self.v))), size=p, replace=False)
            parts.append(np.tile(block, n // p + 1)[:n])
        return np.concatenate(parts)[:t]

    def window(self) -> np.ndarray:
        """A random window of the text, with a random span written twice in it at `repeat_share`."""
        t = self.r.context
        start = int(self.rng.integers(0, len(self.stream) - t))
        w = self.stream[start : start + t].copy()
        if self.rng.random() < self.r.repeat_share:
            n = int(self.rng.integers(8, min(48, (t - 1) // 2) + 1))
            a = int(self.rng.integers(0, t - 2 * n))
            b = int(self.rng.integers(a + n, t - n + 1))
            w[a : a + n] = w[b : b + n] = self.rng.integers(2, self.v, size=n)
        return w

    def next(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(inputs, targets), both (B, context): inputs are <bos> then the sequence but its last character."""
        r = self.r
        share, periods, segment = (
            (r.periodic_share, r.periods, r.segment)
            if step < r.periodic_until
            else (r.later_share, r.later_periods, r.later_segment)
        )
        rows = [self.periodic(periods, segment) if self.rng.random() < share else self.window() for _ in range(r.batch)]
        y = torch.as_tensor(np.stack(rows), dtype=torch.long)
        x = torch.cat([torch.zeros_like(y[:, :1]), y[:, :-1]], 1)  # <bos> is id 0
        return x, y


def lr_at(r: LMRecipe, step: int) -> float:
    """Linear warm-up, then cosine down to min_lr * lr."""
    if step < r.warmup:
        return r.lr * (step + 1) / r.warmup
    done = (step - r.warmup) / max(1, r.steps - r.warmup)
    return r.lr * (r.min_lr + (1 - r.min_lr) * 0.5 * (1 + math.cos(math.pi * done)))


def saves(r: LMRecipe) -> list[int]:
    """The checkpoint steps: the recipe's fractions of the run, the last step last."""
    return sorted({max(1, round(r.steps * f)) for f in r.checkpoints})


def train_lm(r: LMRecipe, corpus: Corpus, out: Path, log_every: int = 50, echo=print) -> dict:
    """Train, write the run folder (checkpoints, log.json, metrics.json) and return the metrics."""
    torch.manual_seed(r.seed)
    counts: dict[str, int] = {}
    for ch in corpus.text():
        counts[ch] = counts.get(ch, 0) + 1
    vocab = CharVocab.from_counts(counts, r.vocab_cap)
    stream = np.asarray(vocab.encode(corpus.text())[1:], dtype=np.int64)
    held = np.asarray(vocab.encode(corpus.text("held"))[1:], dtype=np.int64)
    model = Llama(config(r, len(vocab)))
    init(model, torch.Generator().manual_seed(r.seed), r.qk_std)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": r.weight_decay}, {"params": rest, "weight_decay": 0.0}], lr=r.lr
    )
    batches, keep, curve, ckpts = Batches(r, stream, len(vocab)), saves(r), [], []
    poems = regular_poems(corpus.held_out) if r.lang == "zh" else []
    out.mkdir(parents=True, exist_ok=True)
    (out / "checkpoints").mkdir(exist_ok=True)
    t0, cpu0, busy0, load0, seen = time.perf_counter(), time.process_time(), busy_cpu_s(), load_1m(), 0.0
    for step in range(1, r.steps + 1):
        for group in opt.param_groups:
            group["lr"] = lr_at(r, step - 1)
        x, y = batches.next(step - 1)
        logits = model(x, fused=True)[0]
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        seen += float(loss.detach())
        if step % log_every == 0:
            now = {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - cpu0}
            curve.append({"step": step, "train_loss": seen / log_every, **now})
            echo(f"step {step}: train {seen / log_every:.3f} ({time.perf_counter() - t0:.0f} s)")
            seen = 0.0
        if step in keep:
            model.eval()
            final = step == r.steps
            save_weights(model, out / "model.safetensors" if final else checkpoint_path(out, step), STORE_DTYPE)
            entry = {"step": step, "seconds": time.perf_counter() - t0}
            entry["held_out_loss_part"] = model_loss(model, held[: LOG_WINDOWS * r.context], r.context, vocab.bos_id)
            copy = copying(LanguageModel(model, vocab), corpus.held_out, poems)
            entry |= {k: v for k, v in copy.items() if k.startswith(("copy_loss", "copy_passage_"))}
            ckpts.append(entry)
            echo(f"checkpoint {step}: " + ", ".join(f"{k} {v:.3f}" for k, v in entry.items() if k != "step"))
            model.train()
    train_seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    busy = busy_cpu_s()
    other = None if busy is None or busy0 is None else round((busy - busy0 - cpu) / train_seconds, 2)
    machine = {"cores": os.cpu_count(), "other_busy_cores": other, "load_1m_before": load0, "load_1m_after": load_1m()}
    save_folder(model, vocab, out, STORE_DTYPE)  # config.json, chars.json; model.safetensors again, the same
    log = {"recipe": asdict(r), "steps": keep, "checkpoints": ckpts, "curve": curve, "vocab_size": len(vocab)}
    (out / "log.json").write_text(json.dumps(log, indent=1), encoding="utf-8")
    timing = {"train_seconds": round(train_seconds, 1), "train_cpu_seconds": round(cpu, 1), "machine_load": machine}
    return finish(r, corpus, out, stream, held, timing)


def finish(r: LMRecipe, corpus: Corpus, out: Path, stream, held, timing: dict) -> dict:
    """metrics.json, measured on the stored weights read back through attnlab.lm.load."""
    lm = load(out)
    poems = regular_poems(corpus.held_out) if r.lang == "zh" else []
    metrics = {
        "held_out_loss": model_loss(lm.model, held, r.context, lm.vocab.bos_id),
        **ngram_losses(stream, held, len(lm.vocab), r.context, lm.vocab.bos_id),
        **measure(lm, corpus.held_out, held, r.context, poems),
        "unknown_share": float(np.mean(held == lm.vocab.unk_id)),
        "corpus": corpus.sources,
        "train_chars": int(len(stream)),
        "held_out_chars": int(len(held)),
        "parameters": lm.cfg.parameters(),
        **timing,
        "device": f"cpu ({platform.processor() or platform.machine()}), {torch.get_num_threads()} torch threads",
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1, ensure_ascii=False), encoding="utf-8")
    return metrics
