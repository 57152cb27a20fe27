"""Weights from safetensors: an 8-byte header length, a JSON header of tensor entries, raw little-endian data."""

from __future__ import annotations

import numpy as np

from attnlab.untrusted import ST_DTYPES, json_kind, st_array, st_entry, st_header, st_span
from attnlab.weights_io.checks import WeightsError, check_shapes, pick
from attnlab.weights_io.read_json import JSON_RULES

# Real-number dtypes by safetensors name (every one safetensors has): each is exact in float64.
SAFETENSORS_DTYPES = dict(ST_DTYPES)


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Matrices from safetensors: an 8-byte header length, a JSON header of tensor entries, raw little-endian data.

    The header is read and each entry checked by `attnlab.untrusted` (its refusals become WeightsErrors in
    `load_weights`); the shapes against this package's caps; only then exactly the declared bytes are read.
    Tensors other than w_q..w_o are ignored (their entries must still be objects) and never read.
    """
    header, start = st_header(data, JSON_RULES)
    odd = next((key for key, entry in header.items() if not isinstance(entry, dict)), None)
    if odd is not None:
        raise WeightsError("st_header", f"entry {odd!r} is {json_kind(header[odd])}, not an object")
    entries = {name: st_entry(name, entry, SAFETENSORS_DTYPES) for name, entry in pick(header.items()).items()}
    check_shapes({name: entry.shape for name, entry in entries.items()})
    for name, entry in entries.items():
        st_span(name, entry, len(data) - start)
    return {name: st_array(data, start, entry).astype(np.float64, order="C") for name, entry in entries.items()}
