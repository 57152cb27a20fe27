"""Attention files: what save writes loads back unchanged, and every hostile file is refused with its own reason."""

from __future__ import annotations

import io
import json
import pickle
import string
import struct
import tracemalloc

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.attnfile import FORMAT, AttentionFile, AttentionFileError, file_bytes, load, save, to_bytes
from attnlab.limits import (
    MAX_ATTN_FILE_BYTES,
    MAX_ATTN_HEADER_BYTES,
    MAX_ATTN_HEADS,
    MAX_ATTN_TOKEN_CHARS,
    MAX_ATTN_TOKENS,
    MAX_ATTN_UPLOAD_MB,
    MAX_ATTN_VALUES,
)
from attnlab.ui.app.i18n import LANGS, catalog

ST_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I32": "<i4"}


def softmax_rows(*shape: int, causal: bool = False, seed: int = 0) -> torch.Tensor:
    """Attention weights as a softmax gives them: (L, H, T_q, T_k), causally masked when asked."""
    scores = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    if causal:
        scores = scores.masked_fill(torch.ones(shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
    return scores.softmax(dim=-1)


def raw_file(tensors: dict[str, np.ndarray], meta: dict[str, object] | None, dtype: str = "F32") -> bytes:
    """A safetensors file written by hand, so a test can put anything in its header and metadata."""
    header: dict[str, object] = {} if meta is None else {"__metadata__": meta}
    body = b""
    for name, x in tensors.items():
        data = np.ascontiguousarray(x, dtype=ST_DTYPES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(x.shape), "data_offsets": [len(body), len(body) + len(data)]}
        body += data
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


def meta_for(t_q: int, t_k: int | None = None, **extra: str) -> dict[str, str]:
    """Valid metadata for T_q query tokens (and T_k keys)."""
    meta = {"format": FORMAT, "tokens": json.dumps([f"q{i}" for i in range(t_q)])}
    if t_k is not None:
        meta["tokens_k"] = json.dumps([f"k{i}" for i in range(t_k)])
    return meta | extra


def reason(name: str, data: bytes) -> str:
    """The refusal's reason, after checking that it has a sentence with the same fields in both languages."""
    with pytest.raises(AttentionFileError) as info:
        load(name, data)
    err = info.value
    for lang in LANGS:
        sentence = catalog(lang)[f"attnfile_errors.{err.reason}"]
        assert {f for _, f, _, _ in string.Formatter().parse(sentence) if f} == set(err.fmt), err.reason
        sentence.format(**err.fmt)
    return err.reason


# --- round trips ------------------------------------------------------------------------------------------


def test_save_and_load_round_trip(tmp_path):
    a = softmax_rows(2, 3, 5, 5)
    q, k = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 5, 8)
    path = save(tmp_path / "a.safetensors", a, ["a", "b", "中", "<s>", ""], model="m", queries=q, keys=k)
    f = load(path.name, path.read_bytes())
    assert torch.equal(f.attentions, a) and torch.equal(f.queries, q) and torch.equal(f.keys, k)
    assert f.tokens == f.tokens_k == ("a", "b", "中", "<s>", "")
    assert (f.model, f.kind, f.causal, f.is_self, f.has_qk) == ("m", "self", False, True, True)
    assert f.attentions.dtype == torch.float32 and (f.n_layers, f.n_heads) == (2, 3)


def test_cross_attention_keeps_both_token_lists_and_is_never_causal():
    a = softmax_rows(1, 2, 3, 4)
    f = load("c.safetensors", to_bytes(a, ["x", "y", "z"], ["a", "b", "c", "d"]))
    assert (f.kind, f.causal, f.is_self) == ("cross", False, False)
    assert f.tokens == ("x", "y", "z") and f.tokens_k == ("a", "b", "c", "d") and f.queries is None


def test_causal_is_read_off_the_weights_and_recorded():
    f = load("d.safetensors", to_bytes(softmax_rows(1, 2, 4, 4, causal=True), list("abcd")))
    assert f.causal and f.kind == "self"
    assert load("e.safetensors", file_bytes(f)).causal


@settings(max_examples=40, deadline=None)
@given(
    layers=st.integers(1, 3),
    heads=st.integers(1, 3),
    t_q=st.integers(1, 6),
    t_k=st.integers(1, 6),
    d=st.integers(1, 4),
    causal=st.booleans(),
    words=st.lists(st.text(max_size=8), min_size=12, max_size=12),
    model=st.text(max_size=20),
    seed=st.integers(0, 2**16),
)
def test_round_trip_property(layers, heads, t_q, t_k, d, causal, words, model, seed):
    causal = causal and t_q == t_k
    a = softmax_rows(layers, heads, t_q, t_k, causal=causal, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(layers, heads, t_q, d, generator=gen), torch.randn(layers, heads, t_k, d, generator=gen)
    tokens, tokens_k = words[:t_q], words[6 : 6 + t_k]
    kind = "cross" if t_q != t_k else "self"
    model = model.encode("utf-8", "replace").decode("utf-8")
    tokens = [w.encode("utf-8", "replace").decode("utf-8") for w in tokens]
    tokens_k = tokens if kind == "self" else [w.encode("utf-8", "replace").decode("utf-8") for w in tokens_k]
    f = load("p.safetensors", to_bytes(a, tokens, tokens_k, model=model, queries=q, keys=k, kind=kind))
    assert torch.equal(f.attentions, a) and torch.equal(f.queries, q) and torch.equal(f.keys, k)
    assert f.tokens == tuple(tokens) and f.tokens_k == tuple(tokens_k) and f.model == model and f.kind == kind
    assert f.causal == (kind == "self" and t_q > 1 and causal)


@pytest.mark.parametrize("dtype", ["F64", "F16"])
def test_other_float_widths_load_as_float32(dtype):
    a = softmax_rows(1, 1, 3, 3).numpy()
    f = load("w.safetensors", raw_file({"attentions": a}, meta_for(3), dtype))
    assert f.attentions.dtype == torch.float32 and torch.allclose(f.attentions, torch.from_numpy(a), atol=1e-3)


def test_bfloat16_loads_exactly():
    from safetensors.torch import save as st_save

    a = softmax_rows(1, 2, 3, 3).to(torch.bfloat16)
    f = load("b.safetensors", st_save({"attentions": a}, metadata=meta_for(3)))
    assert torch.equal(f.attentions, a.float())


def test_a_file_from_the_safetensors_library_with_only_tokens_loads():
    from safetensors.torch import save as st_save

    a = softmax_rows(2, 2, 3, 3)
    f = load("plain.safetensors", st_save({"attentions": a}, metadata={"tokens": json.dumps(["a", "b", "c"])}))
    assert f.tokens == f.tokens_k == ("a", "b", "c") and f.model == "" and f.kind == "self"


def test_a_row_that_saw_nothing_loads():
    a = softmax_rows(1, 1, 3, 3)
    a[0, 0, 1] = 0  # a fully masked query: SDPA and our attention give it weights 0
    assert load("z.safetensors", to_bytes(a, list("abc"))).attentions[0, 0, 1].sum() == 0


def test_save_refuses_what_load_would_refuse():
    with pytest.raises(AttentionFileError):
        to_bytes(softmax_rows(1, 1, 3, 3), ["a", "b"])
    with pytest.raises(ValueError):
        to_bytes(softmax_rows(1, 1, 3, 3), list("abc"), queries=torch.zeros(1, 1, 3, 2))


# --- hostile files ------------------------------------------------------------------------------------------

A = softmax_rows(1, 2, 3, 3).numpy()


def with_value(value: float, at: tuple[int, ...] = (0, 1, 2, 0)) -> np.ndarray:
    """The valid weights with one cell replaced."""
    a = A.copy()
    a[at] = value
    return a


HOSTILE = {
    "nan": (raw_file({"attentions": with_value(np.nan)}, meta_for(3)), "not_finite"),
    "inf": (raw_file({"attentions": with_value(np.inf)}, meta_for(3)), "not_finite"),
    "negative": (raw_file({"attentions": with_value(-0.5)}, meta_for(3)), "negative"),
    "above one": (raw_file({"attentions": with_value(1.5)}, meta_for(3)), "above_one"),
    "row sum": (raw_file({"attentions": with_value(0.9, (0, 0, 0, 0))}, meta_for(3)), "row_sum"),
    "too few tokens": (raw_file({"attentions": A}, meta_for(2)), "token_count"),
    "too many key tokens": (raw_file({"attentions": A}, meta_for(3, 4)), "token_count"),
    "tokens not strings": (raw_file({"attentions": A}, {"tokens": json.dumps([1, 2, 3])}), "tokens_not_strings"),
    "tokens not a list": (raw_file({"attentions": A}, {"tokens": json.dumps({"a": 1})}), "tokens_not_strings"),
    "tokens bad json": (raw_file({"attentions": A}, {"tokens": "[a, b, c"}), "bad_json"),
    "lone surrogate": (raw_file({"attentions": A}, {"tokens": '["\\ud800", "b", "c"]'}), "token_text"),
    "token too long": (
        raw_file({"attentions": A}, meta_for(3) | {"tokens": json.dumps(["x" * 999, "b", "c"])}),
        "token_too_long",
    ),
    "no tokens": (raw_file({"attentions": A}, {}), "no_tokens"),
    "no metadata": (raw_file({"attentions": A}, None), "no_tokens"),
    "metadata not strings": (raw_file({"attentions": A}, {"tokens": ["a", "b", "c"]}), "bad_metadata"),
    "other format": (raw_file({"attentions": A}, meta_for(3, format="attnlab-attention/9")), "format"),
    "unknown kind": (raw_file({"attentions": A}, meta_for(3, kind="sideways")), "kind"),
    "self with other keys": (raw_file({"attentions": A}, meta_for(3, 3, kind="self")), "self_tokens"),
    "causal but not": (raw_file({"attentions": A}, meta_for(3, causal="true")), "not_causal"),
    "causal odd": (raw_file({"attentions": A}, meta_for(3, causal="yes")), "bad_metadata"),
    "integers": (raw_file({"attentions": A.astype(np.int32)}, meta_for(3), "I32"), "dtype"),
    "rank 3": (raw_file({"attentions": A[0]}, meta_for(3)), "rank"),
    "no attentions": (raw_file({"weights": A}, meta_for(3)), "no_attentions"),
    "queries alone": (raw_file({"attentions": A, "queries": np.zeros((1, 2, 3, 4))}, meta_for(3)), "qk_pair"),
    "keys wrong shape": (
        raw_file({"attentions": A, "queries": np.zeros((1, 2, 3, 4)), "keys": np.zeros((1, 2, 3, 5))}, meta_for(3)),
        "qk_shape",
    ),
    "queries nan": (
        raw_file(
            {"attentions": A, "queries": np.full((1, 2, 3, 4), np.nan), "keys": np.zeros((1, 2, 3, 4))}, meta_for(3)
        ),
        "not_finite",
    ),
    "keys huge": (
        raw_file(
            {"attentions": A, "queries": np.zeros((1, 2, 3, 4)), "keys": np.full((1, 2, 3, 4), 1e30)}, meta_for(3)
        ),
        "qk_too_large",
    ),
    "empty": (raw_file({"attentions": np.zeros((1, 0, 3, 3))}, meta_for(3)), "empty"),
    "pickle": (pickle.dumps({"attentions": A.tolist()}), "pickle"),
    "not safetensors": (b"hello, this is text", "not_safetensors"),
    "short": (b"\x01\x02", "not_safetensors"),
    "empty file": (b"", "not_safetensors"),
    "header not json": (struct.pack("<Q", 5) + b"{abcd", "bad_json"),
    "header a list": (struct.pack("<Q", 2) + b"[]", "not_safetensors"),
    "header not utf-8": (struct.pack("<Q", 4) + b"{\xff\xfe}", "bad_json"),
    "duplicate key": (struct.pack("<Q", 15) + b'{"a": 1, "a": 2}'[:15], "bad_json"),
}


def torch_zip() -> bytes:
    """What torch.save writes today: a zip holding data.pkl."""
    buf = io.BytesIO()
    torch.save({"attentions": torch.from_numpy(A)}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_each_hostile_file_gets_its_reason(case):
    data, want = HOSTILE[case]
    assert reason("upload.safetensors", data) == want


def test_a_pickle_is_named_by_its_content_or_its_name():
    assert torch_zip()[:4] == b"PK\x03\x04"  # torch.save's zip, not a bare pickle
    assert reason("a.safetensors", torch_zip()) == "pickle"
    assert reason("model.bin", raw_file({"attentions": A}, meta_for(3))) == "pickle"
    assert reason("weights.PT", b"anything") == "pickle"


@pytest.mark.parametrize("marker", [0x280, 0x380, 0x480, 0x580])  # begins 80 02 to 80 05, as pickles 2 to 5 do
def test_a_valid_file_whose_header_length_begins_as_a_pickle_loads(marker):
    """A safetensors file opens with its header's length, little-endian: found by hypothesis on the round trip."""
    a = softmax_rows(1, 1, 8, 8)
    data = b""
    for extra in range(8 * 200):  # the tokens grow the header a byte a character (JSON's own layout aside)
        tokens = ["t" * min(200, max(0, extra - 200 * i)) for i in range(8)]
        data = to_bytes(a, tokens)
        if struct.unpack("<Q", data[:8])[0] == marker:
            break
    assert data[:2] == bytes([0x80, marker >> 8])
    assert torch.equal(load("p.safetensors", data).attentions, a)


def test_a_duplicate_key_is_named():
    text = b'{"attentions": {}, "attentions": {}}'
    assert reason("d.safetensors", struct.pack("<Q", len(text)) + text) == "json_duplicate_key"


def test_offsets_outside_the_data_are_refused():
    header = {
        "__metadata__": meta_for(3),
        "attentions": {"dtype": "F32", "shape": [1, 2, 3, 3], "data_offsets": [0, 72]},
    }
    text = json.dumps(header).encode()
    assert reason("o.safetensors", struct.pack("<Q", len(text)) + text + bytes(40)) == "offsets"


@pytest.mark.parametrize(
    ("shape", "want"),
    [
        ([1, 1, MAX_ATTN_TOKENS + 1, 1], "too_many_tokens"),
        ([MAX_ATTN_HEADS + 1, 1, 2, 2], "too_many_heads"),
        ([1, 16, 1024, MAX_ATTN_VALUES // (16 * 1024) + 1], "too_many_values"),
    ],
)
def test_caps_are_checked_from_the_header_alone(shape, want):
    """Declared shapes past the caps are refused from the header: the file holds no data for them at all."""
    nbytes = int(np.prod(shape)) * 4
    header = {"__metadata__": meta_for(1), "attentions": {"dtype": "F32", "shape": shape, "data_offsets": [0, nbytes]}}
    text = json.dumps(header).encode()
    assert reason("cap.safetensors", struct.pack("<Q", len(text)) + text) == want


def test_an_oversized_upload_is_refused_by_its_size():
    assert reason("big.safetensors", bytes(MAX_ATTN_FILE_BYTES + 1)) == "too_big"


def test_an_oversized_header_is_refused_before_parsing():
    data = struct.pack("<Q", MAX_ATTN_HEADER_BYTES + 1) + b"{" + b" " * MAX_ATTN_HEADER_BYTES
    assert reason("h.safetensors", data) == "header_too_big"


def test_a_header_of_many_containers_is_refused_before_parsing():
    text = b'{"x": [' + b"[]," * 40_000 + b"[]]}"
    assert reason("c.safetensors", struct.pack("<Q", len(text)) + text) == "header_too_complex"


def test_a_deep_header_is_bad_json_not_a_crash():
    text = b'{"x": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"
    assert reason("deep.safetensors", struct.pack("<Q", len(text)) + text) in {"bad_json", "header_too_complex"}


def test_a_bomb_header_allocates_nothing():
    """A header that claims 2**63 bytes over a small file, and shapes of 10**12 values: refused without allocating."""
    bombs = [
        struct.pack("<Q", 2**63) + b"{}",
        struct.pack("<Q", 120)
        + json.dumps({"attentions": {"dtype": "F32", "shape": [10**6] * 4, "data_offsets": [0, 4 * 10**24]}})
        .encode()
        .ljust(120),
    ]
    for data in bombs:
        tracemalloc.start()
        try:
            with pytest.raises(AttentionFileError):
                load("bomb.safetensors", data)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 2**20, peak


def test_a_huge_but_honest_file_is_read_with_bounded_memory():
    """A header near the cap, 2,048 tokens of text over 2,048 x 2,048 weights, loads within a bounded peak."""
    n = MAX_ATTN_TOKENS
    token = "x" * min(MAX_ATTN_TOKEN_CHARS, (MAX_ATTN_HEADER_BYTES // n) - 16)
    data = raw_file({"attentions": np.zeros((1, 1, n, n))}, {"tokens": json.dumps([token] * n)})
    assert len(data) > MAX_ATTN_HEADER_BYTES // 2
    tracemalloc.start()
    try:
        assert load("t.safetensors", data).tokens == (token,) * n  # every query saw nothing: rows of 0 load
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, peak


def test_not_bytes_is_refused_too():
    assert reason("x.safetensors", "a string") == "not_safetensors"  # type: ignore[arg-type]


def test_attention_file_is_frozen():
    f = AttentionFile(torch.zeros(1, 1, 1, 1), ("a",), ("a",))
    with pytest.raises(AttributeError):
        f.model = "x"  # type: ignore[misc]


def test_streamlit_upload_cap_matches_the_attention_file_cap():
    """Streamlit refuses larger uploads itself (in MB), so the page never receives a file the loader would cap."""
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == MAX_ATTN_UPLOAD_MB
    assert MAX_ATTN_FILE_BYTES == MAX_ATTN_UPLOAD_MB * 2**20
