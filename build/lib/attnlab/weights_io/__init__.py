"""Save and load the four projections: JSON, NumPy .npz (never pickled) or safetensors.

Everything a visitor uploads is untrusted, so each reader follows the same order: check what the
file declares (names, dtypes, shapes, member sizes) against the caps, and only then read exactly
the bytes those declarations allow. Memory is bounded by the upload cap, never by what a file
claims; a member or tensor that is not one of the four projections is never read or decompressed.
Pickles (and torch.save's zips, which hold one) are refused outright (loading one runs code) and never
unpickled, not even to look. What all uploads share, JSON bounded before parsing, pickle detection and
safetensors headers, lives in `attnlab.untrusted`, whose refusals become WeightsErrors here.

Values: every real number loads (float64/32/16, bfloat16 and integers, all exact in float64 within
MAX_WEIGHT); anything else (bool, complex, text, objects) is refused rather than cast.

Every refusal is a WeightsError: `reason` picks the sentence `lab.upload_<reason>` in the user's
language, `fmt` fills its fields, `detail` carries a library's own English words (or None), to be
shown apart from the sentence.
"""

from __future__ import annotations

import json

import torch

from attnlab.limits import MAX_NPZ_MEMBERS as MAX_MEMBERS  # the package's public name for the cap
from attnlab.limits import MAX_UPLOAD_BYTES
from attnlab.multihead import NAMES, MultiHeadWeights
from attnlab.untrusted import PICKLE_SUFFIXES, Refusal, is_torch_zip
from attnlab.weights_io.checks import FORMAT, SHORT_CHARS, WeightsError, check_values, clip, refused
from attnlab.weights_io.read_json import JSON_TOKENS, read_json
from attnlab.weights_io.read_npz import NPY_DTYPES, read_npz
from attnlab.weights_io.read_safetensors import SAFETENSORS_DTYPES, read_safetensors

__all__ = [
    "FORMAT",
    "JSON_TOKENS",
    "MAX_MEMBERS",
    "NPY_DTYPES",
    "PICKLE_SUFFIXES",
    "SAFETENSORS_DTYPES",
    "WeightsError",
    "edits_between",
    "load_weights",
    "to_json",
]


def to_json(weights: MultiHeadWeights) -> bytes:
    """The weights as readable JSON: {"format", "d_model", "w_q": [[...]], ...}."""
    doc = {"format": FORMAT, "d_model": weights.d_model}
    doc.update({name: m.tolist() for name, m in weights.as_dict().items()})
    return json.dumps(doc).encode()


def load_weights(name: str, data: bytes) -> MultiHeadWeights:
    """Parse an uploaded weights file by its extension; anything unusable is a WeightsError, nothing else escapes."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise WeightsError("too_big", size=len(data), cap=MAX_UPLOAD_BYTES)
    lower = name.lower()
    if lower.endswith(PICKLE_SUFFIXES):
        raise WeightsError("pickle_refused")
    readers = {".json": read_json, ".npz": read_npz, ".safetensors": read_safetensors}
    reader = next((read for suffix, read in readers.items() if lower.endswith(suffix)), None)
    if reader is None:
        raise WeightsError("extension", name=clip(name, SHORT_CHARS))
    if is_torch_zip(data):  # a zip, like an .npz, but its data.pkl would run code when loaded
        raise WeightsError("pickle_refused")
    try:
        mats = reader(data)
    except Refusal as err:  # the shared reader of untrusted bytes (JSON, safetensors headers)
        raise refused(err, data) from None
    for matrix, values in mats.items():
        check_values(matrix, values)
    return MultiHeadWeights(**{matrix: torch.from_numpy(values) for matrix, values in mats.items()})


def edits_between(base: MultiHeadWeights, target: MultiHeadWeights) -> dict[tuple[str, int, int], float]:
    """The cells where `target` differs from `base`, as Playground overrides."""
    edits = {}
    for name in NAMES:
        diff = (getattr(target, name) != getattr(base, name)).nonzero().tolist()
        edits.update({(name, r, c): float(getattr(target, name)[r, c]) for r, c in diff})
    return edits
