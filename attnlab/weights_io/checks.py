"""What every weights reader shares: the refusal, the caps, and the checks of names, shapes and values."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

import numpy as np

from attnlab.limits import MAX_D_MODEL, MAX_WEIGHT, MIN_D_MODEL
from attnlab.multihead import NAMES

FORMAT = "attnlab-weights/1"
PICKLE_SUFFIXES = (".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".bin", ".joblib")
PICKLE_PROTOCOLS = (2, 3, 4, 5)  # a pickle of protocol 2+ starts with 0x80 and its protocol byte
DETAIL_CHARS = 200
SHORT_CHARS = 40

T = TypeVar("T")


class WeightsError(ValueError):
    """An upload that cannot be used: `reason` is a locale key suffix, `fmt` its fields, `detail` a library's words."""

    def __init__(self, reason: str, detail: str | None = None, **fmt: object) -> None:
        self.reason, self.fmt = reason, fmt
        self.detail = clip(detail, DETAIL_CHARS) if detail is not None else None
        super().__init__(reason if self.detail is None else f"{reason}: {self.detail}")


def clip(text: object, limit: int) -> str:
    """Outside or library text cut to `limit` characters, on one line, encodable (no lone surrogates)."""
    flat = " ".join(str(text).split()).encode("utf-8", "backslashreplace").decode("utf-8")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def is_pickle(data: bytes) -> bool:
    """A pickle of protocol 2 or later: what torch.save, joblib and pickle.dumps write."""
    return len(data) >= 2 and data[0] == 0x80 and data[1] in PICKLE_PROTOCOLS


def unreadable(data: bytes, reason: str, detail: str | None = None, **fmt: object) -> WeightsError:
    """The refusal for a file that is not valid in its declared format: a pickle is named as one."""
    return WeightsError("pickle_refused") if is_pickle(data) else WeightsError(reason, detail, **fmt)


def weight_name(key: str) -> str | None:
    """Which projection a key names (w_q..w_o, any case, ASCII only), or None for any other key."""
    lower = key.lower()
    return lower if key.isascii() and lower in NAMES else None


def pick(entries: Iterable[tuple[str, T]]) -> dict[str, T]:
    """The four projections from (key, value) pairs; other keys are ignored, a repeated or missing one refused."""
    found: dict[str, T] = {}
    for key, value in entries:
        name = weight_name(key)
        if name in found:
            raise WeightsError("duplicate", name=name)
        if name is not None:
            found[name] = value
    missing = [name for name in NAMES if name not in found]
    if missing:
        raise WeightsError("missing", name=", ".join(missing))
    return {name: found[name] for name in NAMES}


def shape_text(shape: tuple[int, ...]) -> str:
    """A declared shape for a message, short even when a file declares absurd sizes."""
    return clip(" × ".join(str(n) for n in shape) or "()", SHORT_CHARS)


def check_shapes(shapes: dict[str, tuple[int, ...]]) -> int:
    """d_model from the declared shapes, before any data is read: all square, all equal, within the caps."""
    for name, shape in shapes.items():
        if len(shape) != 2 or shape[0] != shape[1]:
            raise WeightsError("not_square", name=name, shape=shape_text(shape))
    d = shapes["w_q"][0]
    if not MIN_D_MODEL <= d <= MAX_D_MODEL:
        raise WeightsError("size", d=clip(d, SHORT_CHARS), min=MIN_D_MODEL, cap=MAX_D_MODEL)
    for name, shape in shapes.items():
        if shape[0] != d:
            raise WeightsError("shape", name=name, shape=shape_text(shape), d=d)
    return d


def cell(name: str, index: Iterable[int]) -> str:
    """A cell as the editor names it: w_q[row, col]."""
    row, col = (int(i) for i in index)
    return f"{name}[{row}, {col}]"


def check_values(name: str, m: np.ndarray) -> None:
    """Every value finite and no larger than MAX_WEIGHT in size; the first cell that is not is named."""
    bad = np.argwhere(~np.isfinite(m))
    if len(bad):
        raise WeightsError("not_finite", cell=cell(name, bad[0]))
    big = np.argwhere(np.abs(m) > MAX_WEIGHT)
    if len(big):
        raise WeightsError("too_large", cell=cell(name, big[0]), cap=f"{MAX_WEIGHT:g}")
