"""Uploaded weights: every accepted format round-trips, every bad file is refused with its reason."""

from __future__ import annotations

import io
import json
import pickle
import struct

import numpy as np
import pytest
import torch

from attnlab.multihead import NAMES, MultiHeadWeights
from attnlab.weights_io import MAX_BYTES, WeightsError, edits_between, load_weights, to_json


def safetensors_bytes(mats: dict[str, np.ndarray], dtype: str = "F32") -> bytes:
    """A minimal safetensors writer, for the tests only."""
    np_dtype = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I32": "<i4"}[dtype]
    header, body = {}, b""
    for name, m in mats.items():
        raw = np.ascontiguousarray(m, dtype=np_dtype).tobytes()
        header[name] = {"dtype": dtype, "shape": list(m.shape), "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + body


def npz_bytes(mats: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **mats)
    return buf.getvalue()


@pytest.fixture
def weights() -> MultiHeadWeights:
    return MultiHeadWeights.random(6, seed=3)


def test_json_round_trip_is_exact(weights):
    back = load_weights("w.json", to_json(weights))
    for name in NAMES:
        assert torch.equal(getattr(back, name), getattr(weights, name))


def test_npz_and_safetensors_load(weights):
    mats = {name: m.numpy() for name, m in weights.as_dict().items()}
    assert torch.equal(load_weights("w.npz", npz_bytes(mats)).w_v, weights.w_v)
    got = load_weights("w.safetensors", safetensors_bytes({k.upper(): v for k, v in mats.items()}, "F64"))
    assert torch.equal(got.w_o, weights.w_o)
    got32 = load_weights("w.safetensors", safetensors_bytes(mats, "F32"))
    assert torch.allclose(got32.w_q, weights.w_q, atol=1e-6)


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("w.pt", b"PK\x03\x04whatever", "pickle_refused"),
        ("w.json", pickle.dumps({"w_q": [[1.0]]}), "pickle_refused"),
        ("w.txt", b"{}", "extension"),
        ("w.json", b"{not json", "malformed"),
        ("w.json", b"[1, 2]", "malformed"),
        ("w.json", json.dumps({"w_q": [[1.0]]}).encode(), "missing"),
        ("w.json", json.dumps({n: "abc" for n in NAMES}).encode(), "not_numbers"),
        (
            "w.json",
            json.dumps({n: [[1.0, 2.0], [3.0, 4.0]] if n != "w_v" else [[1.0]] for n in NAMES}).encode(),
            "shape",
        ),
        ("w.json", json.dumps({n: [[1.0]] for n in NAMES}).encode(), "size"),
        ("w.json", json.dumps({n: [[1.0, float("nan")], [0, 1]] for n in NAMES}).encode(), "not_finite"),
        ("w.json", json.dumps({n: [[1.0, 1e6], [0, 1]] for n in NAMES}).encode(), "too_large"),
        ("w.safetensors", b"\x01", "malformed"),
        ("w.safetensors", struct.pack("<Q", 10**9) + b"{}", "malformed"),
        ("w.npz", b"not a zip", "malformed"),
        ("w.json", b" " * (MAX_BYTES + 1), "too_big"),
    ],
)
def test_bad_files_are_refused_with_a_reason(name, data, reason):
    with pytest.raises(WeightsError) as err:
        load_weights(name, data)
    assert err.value.reason == reason


def test_npz_with_object_arrays_is_refused_as_a_pickle():
    mats = {n: np.array([[1.0, 2.0], [3.0, 4.0]]) for n in NAMES}
    mats["w_k"] = np.array([{"evil": 1}, None], dtype=object)
    with pytest.raises(WeightsError) as err:
        load_weights("w.npz", npz_bytes(mats))
    assert err.value.reason == "pickle_refused"


def test_unsupported_safetensors_dtype_is_named():
    mats = {n: np.eye(2) for n in NAMES}
    with pytest.raises(WeightsError) as err:
        load_weights("w.safetensors", safetensors_bytes(mats, "I32"))
    assert err.value.reason == "dtype"


def test_edits_between_lists_exactly_the_changed_cells(weights):
    changed = weights.replace(
        w_k=weights.w_k.clone().index_put_(
            (torch.tensor([1]), torch.tensor([2])), torch.tensor(9.0, dtype=torch.float64)
        )
    )
    assert edits_between(weights, changed) == {("w_k", 1, 2): 9.0}
    assert edits_between(weights, weights) == {}
