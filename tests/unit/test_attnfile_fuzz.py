"""Fuzzing attnfile.load with files shaped like safetensors attention files, and with raw bytes.

Whatever the bytes and the name, load gives a valid AttentionFile (shapes that agree, within the caps,
finite weights in [0, 1], rows summing to 1 or 0, tokens that are strings) or an AttentionFileError
whose reason has a sentence in both languages and is not the catch-all `unreadable` (which would mean
a check is missing). The strategies write headers that are nearly right or lie about one thing, and
valid files truncated, bit-flipped or spliced; scripts/fuzz_readers.py --target attnfile runs them far longer.
"""

from __future__ import annotations

import json
import string
import struct

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers

from attnlab.attnfile import DECLINED, FORMAT, KINDS, AttentionFile, AttentionFileError, load, to_bytes
from attnlab.limits import (
    MAX_ATTN_HEADS,
    MAX_ATTN_TOKEN_CHARS,
    MAX_ATTN_TOKENS,
    MAX_ATTN_VALUES,
    TOL_ATTN_ROW_SUM,
    TOL_ATTN_WEIGHT,
)
from attnlab.ui.app.i18n import LANGS, catalog

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)


def check_file(f: AttentionFile) -> None:
    """What every accepted file promises the page."""
    a = f.attentions
    n_layers, n_heads, t_q, t_k = a.shape
    assert a.dtype == torch.float32 and n_layers * n_heads <= MAX_ATTN_HEADS and max(t_q, t_k) <= MAX_ATTN_TOKENS
    assert a.isfinite().all() and a.min() >= -TOL_ATTN_WEIGHT and a.max() <= 1 + TOL_ATTN_WEIGHT
    sums = a.double().sum(-1)
    assert (((sums - 1).abs() <= TOL_ATTN_ROW_SUM) | (sums.abs() <= TOL_ATTN_ROW_SUM)).all()
    assert len(f.tokens) == t_q and len(f.tokens_k) == t_k
    assert all(isinstance(t, str) and len(t) <= MAX_ATTN_TOKEN_CHARS for t in f.tokens + f.tokens_k)
    assert isinstance(f.model, str) and f.kind in KINDS and isinstance(f.causal, bool)
    assert (f.queries is None) == (f.keys is None)
    values = a.numel()
    if f.queries is not None:
        d = f.queries.size(-1)
        n_kv = f.keys.size(1)
        assert f.queries.shape == (n_layers, n_heads, t_q, d) and f.keys.shape == (n_layers, n_kv, t_k, d)
        assert n_kv >= 1 and n_heads % n_kv == 0 and f.n_kv_heads == n_kv
        assert f.queries.isfinite().all() and f.keys.isfinite().all()
        values += f.queries.numel() + f.keys.numel()
    else:
        assert f.scale == f.softcap == () and f.n_kv_heads == n_heads
    for values_per_layer in (f.scale, f.softcap, f.window):
        assert values_per_layer == () or len(values_per_layer) == n_layers
    assert all(s > 0 for s in f.scale) and all(c is None or c > 0 for c in f.softcap)
    assert all(w is None or (isinstance(w, int) and w >= 1) for w in f.window)
    assert f.causal or all(w is None for w in f.window)
    assert f.qk_declined in ("", *DECLINED) and not (f.qk_declined and f.has_qk)
    assert values <= MAX_ATTN_VALUES
    if f.kind != "cross":
        assert f.tokens == f.tokens_k
    if f.causal:
        assert t_q == t_k and (a.triu(1).abs() <= TOL_ATTN_WEIGHT).all()


def outcome(name: str, data: bytes) -> str:
    """Load one file and check the contract: 'accepted' or the refusal's reason; anything else fails the test."""
    try:
        f = load(name, data)
    except AttentionFileError as err:
        assert err.reason != "unreadable", err.detail
        for lang in LANGS:
            sentence = catalog(lang)[f"attnfile_errors.{err.reason}"]
            assert {f for _, f, _, _ in string.Formatter().parse(sentence) if f} == set(err.fmt), err.reason
            sentence.format(**err.fmt)
        assert err.detail is None or len(err.detail) <= 200
        return err.reason
    check_file(f)
    return "accepted"


# --- pieces of a file ------------------------------------------------------------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=6)
JSON_ANY = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
DTYPES = st.sampled_from(["F32", "F16", "BF16", "F64"]) | st.sampled_from(["I32", "U8", "BOOL", "f32", ""]) | JSON_ANY
DIMS = st.integers(0, 5) | st.sampled_from([MAX_ATTN_TOKENS + 1, 2**40, -1]) | JSON_SCALARS
NAMES = st.sampled_from(["x.safetensors", "X.SAFETENSORS", "a.pt", "b.bin", "c", "", "d.json"]) | st.text(max_size=10)


def lie(kinds: list[str]) -> st.SearchStrategy[str | None]:
    """At most one lie per file, none in about a third of them, so most checks are reached with the rest valid."""
    return st.sampled_from([None] * (len(kinds) // 2 + 1) + kinds)


@st.composite
def weights(draw, shape: tuple[int, ...]) -> np.ndarray:
    """Softmax rows (some causal, some rows zero), or with one cell spoiled."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scores = rng.normal(size=shape)
    if draw(st.booleans()) and shape[-1] == shape[-2]:
        scores = np.where(np.triu(np.ones(shape[-2:], dtype=bool), 1), -np.inf, scores)
    a = np.exp(scores - scores.max(axis=-1, keepdims=True))
    a = a / a.sum(axis=-1, keepdims=True)
    if draw(st.booleans()) and a.size:
        a.reshape(-1, shape[-1])[draw(st.integers(0, a.size // shape[-1] - 1))] = 0
    if draw(st.booleans()) and a.size:
        a.flat[draw(st.integers(0, a.size - 1))] = draw(st.floats(allow_nan=True, allow_infinity=True, width=32))
    return a


RULE_KEYS = ["scale", "softcap", "window", "qk_declined"]


@st.composite
def rule_fields(draw, n_layers: int, has_qk: bool) -> dict[str, str]:
    """Rule fields a writer could state: mostly well-formed lists, sometimes a value out of range."""
    fields = {}
    numbers = st.floats(0.01, 50) | st.sampled_from([0.0, -1.0, float("nan"), 1e9])
    if has_qk and draw(st.booleans()):
        fields["scale"] = json.dumps([draw(numbers) for _ in range(n_layers)])
    if has_qk and draw(st.booleans()):
        fields["softcap"] = json.dumps([draw(st.none() | numbers) for _ in range(n_layers)])
    if draw(st.booleans()):
        windows = st.none() | st.integers(1, 6) | st.sampled_from([0, 2.5, True, 2**40])
        fields["window"] = json.dumps([draw(windows) for _ in range(n_layers)])
    if not has_qk and draw(st.booleans()):
        fields["qk_declined"] = draw(st.sampled_from([*DECLINED, "other"]))
    return fields


def near_grouping(n_heads: int, n_kv: int) -> st.SearchStrategy[list[int]]:
    """A grouping that is nearly the right one: each query head's key/value head, one of them moved anywhere."""
    right = [h // max(1, n_heads // max(n_kv, 1)) for h in range(n_heads)]
    return st.tuples(st.integers(0, n_heads - 1), st.integers(-2, n_heads + 2)).map(
        lambda moved: [moved[1] if h == moved[0] else k for h, k in enumerate(right)]
    )


@st.composite
def header_file(draw) -> bytes:
    """A hand-written safetensors attention file, nearly right, lying about at most one thing."""
    what = draw(
        lie(
            ["dtype", "shape", "offsets", "tokens", "tokens_k", "meta", "kind", "causal", "qk", "extra", "length"]
            + ["grouping", "rule"]
        )
    )
    n_layers, n_heads, t_q = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 5))
    t_k = draw(st.sampled_from([t_q, draw(st.integers(1, 5))]))
    shape = (n_layers, n_heads, t_q, t_k)
    dtype = draw(st.sampled_from(["F32", "F16", "F64"]))
    tensors = {"attentions": draw(weights(shape))}
    n_kv = n_heads
    if what in ("qk", "grouping") or draw(st.booleans()):
        d = draw(st.integers(1, 4))
        n_kv = draw(st.sampled_from([k for k in range(1, n_heads + 1) if n_heads % k == 0]))
        if what == "grouping" and draw(st.booleans()):
            n_kv = draw(st.integers(0, n_heads + 2))  # heads that need not divide the query heads
        tensors["queries"] = np.asarray(draw(st.lists(st.floats(-10, 10), min_size=1, max_size=1))[0]) * np.ones(
            (n_layers, n_heads, t_q, d)
        )
        tensors["keys"] = np.ones((n_layers, n_kv, t_k, d))
        if what == "qk":
            tensors[draw(st.sampled_from(["queries", "keys"]))] = np.ones(
                tuple(draw(st.lists(st.integers(0, 4), max_size=5)))
            )
    header: dict[str, object] = {}
    body = b""
    np_dtype = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}[dtype]
    for name, x in tensors.items():
        with np.errstate(over="ignore"):  # a spoiled cell past float16's range becomes inf, as a writer would store it
            raw = np.asarray(x, dtype=np_dtype).tobytes()
        header[name] = {"dtype": dtype, "shape": list(x.shape), "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    target = draw(st.sampled_from(sorted(tensors)))
    if what == "dtype":
        header[target]["dtype"] = draw(DTYPES)
    if what == "shape":
        header[target]["shape"] = draw(st.lists(DIMS, max_size=6) | JSON_ANY)
    if what == "offsets":
        header[target]["data_offsets"] = draw(st.lists(DIMS, max_size=3) | JSON_ANY)
    tokens = [draw(st.text(max_size=4)) for _ in range(t_q)]
    meta: dict[str, object] = {"format": FORMAT, "model": draw(st.text(max_size=8)), "tokens": json.dumps(tokens)}
    if t_k != t_q or draw(st.booleans()):
        meta["tokens_k"] = json.dumps([draw(st.text(max_size=4)) for _ in range(t_k)])
    if draw(st.booleans()):
        meta["kind"] = draw(st.sampled_from(KINDS))
    if draw(st.booleans()):
        meta["causal"] = draw(st.sampled_from(["true", "false"]))
    if "keys" in tensors and n_kv and (n_kv != n_heads or draw(st.booleans())):
        meta["kv_head_of"] = json.dumps([h // max(1, n_heads // n_kv) for h in range(n_heads)])
    if what == "rule" or draw(st.integers(0, 3)) == 0:  # a quarter of the files state a rule
        meta.update(draw(rule_fields(n_layers, "queries" in tensors)))
    lies = {
        "tokens": ("tokens", json.dumps(draw(JSON_ANY)) if draw(st.booleans()) else draw(st.text(max_size=10))),
        "tokens_k": ("tokens_k", json.dumps(draw(st.lists(st.text(max_size=3), max_size=6)))),
        "kind": ("kind", draw(st.text(max_size=8))),
        "causal": ("causal", draw(st.text(max_size=5))),
        "meta": (draw(st.sampled_from(["format", "model", "tokens"])), draw(JSON_ANY)),
        "grouping": ("kv_head_of", json.dumps(draw(JSON_ANY | near_grouping(n_heads, n_kv)))),
        "rule": (draw(st.sampled_from(RULE_KEYS)), json.dumps(draw(JSON_ANY | st.lists(JSON_SCALARS, max_size=4)))),
    }
    if what in lies:
        key, value = lies[what]
        meta[key] = value
    header["__metadata__"] = meta
    if what == "extra":
        header[draw(st.sampled_from(["__metadata__", "attentions", "other"]))] = draw(JSON_ANY)
    text = json.dumps(header).encode() + b" " * draw(st.integers(0, 7))
    length = draw(st.integers(0, 2**64 - 1)) if what == "length" else len(text)
    return struct.pack("<Q", length) + text + body


@st.composite
def mutated_file(draw) -> bytes:
    """A valid file written by to_bytes, then truncated, bit-flipped or spliced with random bytes."""
    t = draw(st.integers(1, 4))
    a = torch.softmax(torch.randn(1, 2, t, t, generator=torch.Generator().manual_seed(draw(st.integers(0, 99)))), -1)
    q = torch.randn(1, 2, t, 3) if draw(st.booleans()) else None
    data = bytearray(to_bytes(a, [f"t{i}" for i in range(t)], queries=q, keys=None if q is None else q.clone()))
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["cut", "flip", "splice"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if how == "cut":
            del data[at:]
        elif how == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        else:
            data[at:at] = draw(st.binary(max_size=16))
    return bytes(data)


# --- the fuzz tests ------------------------------------------------------------------------------------------


@FUZZ
@given(data=header_file(), name=st.sampled_from(["a.safetensors", "a.st"]))
def test_crafted_headers_never_escape(data, name):
    outcome(name, data)


@FUZZ
@given(data=mutated_file())
def test_mutated_valid_files_never_escape(data):
    outcome("m.safetensors", data)


@FUZZ
@given(data=st.binary(max_size=256), name=NAMES)
def test_random_bytes_never_escape(data, name):
    outcome(name, data)


@FUZZ
@given(
    header=st.binary(max_size=200) | JSON_ANY.map(lambda v: json.dumps(v).encode()),
    body=st.binary(max_size=64),
)
def test_random_headers_never_escape(header, body):
    outcome("r.safetensors", struct.pack("<Q", len(header)) + header + body)


def test_the_strategies_reach_acceptance_and_many_reasons(monkeypatch):
    """The fuzzers are not refused at the door: valid files load and refusals come from many checks.

    Hypothesis mixes into its draws the literals of every local module the process has imported
    (`providers._get_local_constants`), so under xdist what ran before in the worker changed the 300 files drawn
    here, derandomized or not: the key/value checks were missed in 2 of 4 whole-suite runs, never in a run of this file
    alone, and every time once every attnlab module had been imported first. Which checks the strategies reach is a
    property of the strategies, so they are drawn here without that pool, the same files in every process."""
    monkeypatch.setattr(providers, "_get_local_constants", providers.Constants)
    monkeypatch.setattr(providers, "CONSTANTS_CACHE", providers.LRUCache(1024))  # no permitted values from the pool
    seen: set[str] = set()

    # derandomized: the seed comes from the test, not from whatever ran before in the process
    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
    @given(data=header_file())
    def collect(data):
        seen.add(outcome("s.safetensors", data))

    collect()
    assert "accepted" in seen and len(seen) >= 10, seen
    assert {"kv_heads", "kv_grouping", "outside_window"} & seen, seen  # the new fields' checks are reached
