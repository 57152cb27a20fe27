"""A shipped run along its training: the losses its log recorded, and the heads' scores at every checkpoint.

The run's `log.json` (written by `attnlab.lm.training`) holds, per checkpoint, the held-out loss and contract 16's
copy measures; the heads' scores are not in it, so `along_training` loads each checkpoint and reads one probe
text (a text written twice: a first copy to read and a second to copy) with `attnlab.lmlab.finder`.
`copying_from` names the checkpoint where copying appears: the first whose gain (the first copy's loss minus the
second's, on the run's random strings) reaches half of the last checkpoint's gain, when that gain is positive.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnlab.lmlab.finder import SCORES, head_scores
from attnlab.lmlab.reading import copies, read

LOG = "log.json"


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint's heads on the probe: each score (L, H), NaN where the probe cannot show it; its copy losses."""

    step: int
    scores: dict[str, np.ndarray]
    copy_first: float
    copy_second: float


def logged(folder: Path | None) -> list[dict]:
    """The run's per-checkpoint records (step, held_out_loss, copy_loss_first, ...), [] for a folder without a log."""
    path = None if folder is None else Path(folder) / LOG
    if path is None or not path.is_file():
        return []
    return list(json.loads(path.read_text(encoding="utf-8")).get("checkpoints", []))


def held_out_of(record: dict) -> float | None:
    """A checkpoint's held-out loss as its log recorded it: on the whole held-out split (`held_out_loss`) or, where
    the log keeps it cheaper, on its first windows (`held_out_loss_part`)."""
    return record.get("held_out_loss", record.get("held_out_loss_part"))


def probe_of(text: str) -> str:
    """The probe: a text written twice."""
    return text + text


def along_training(load, steps: list[int], probe: str) -> list[Checkpoint]:
    """Every checkpoint (`load(step)` gives its LanguageModel) on the probe: head scores and the two copies' losses."""
    out = []
    for step in steps:
        lm = load(step)
        reading = read(lm, probe)
        scores = head_scores(reading.attentions, reading.pieces, reading.lead)
        shape = (lm.n_layers, lm.n_heads)
        grids = {k: np.full(shape, np.nan) if scores[k] is None else scores[k].numpy() for k in SCORES}
        first, second = copies(reading) or (float("nan"), float("nan"))
        out.append(Checkpoint(step, grids, first, second))
    return out


def copying_from(records: list[dict], first: str = "copy_loss_first", second: str = "copy_loss_second") -> int | None:
    """The step of the first checkpoint whose copy gain reaches half the last one's (None: no gain at the end)."""
    gains = [(r["step"], r[first] - r[second]) for r in records if first in r and second in r]
    if not gains or gains[-1][1] <= 0:
        return None
    return next(step for step, gain in gains if gain >= gains[-1][1] / 2)
