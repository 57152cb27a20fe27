"""The shared reader of untrusted bytes (attnlab.untrusted), and how both upload readers name its refusals."""

from __future__ import annotations

import io
import json
import pickle
import string
import struct

import numpy as np
import pytest
import torch

from attnlab import untrusted
from attnlab.attnfile import AttentionFileError
from attnlab.attnfile import load as load_attention
from attnlab.attnfile.reader import _refused as attnfile_error
from attnlab.multihead import NAMES
from attnlab.ui.app.i18n import LANGS, catalog
from attnlab.untrusted import (
    ST_DTYPES,
    Entry,
    JsonRules,
    Refusal,
    clip,
    is_pickle,
    is_torch_zip,
    parse_json,
    pickled,
    st_array,
    st_entry,
    st_header,
    st_span,
)
from attnlab.weights_io import WeightsError, load_weights
from attnlab.weights_io.checks import refused as weights_error
from tests.unit.test_weights_io import npy_bytes, zip_bytes

RULES = JsonRules(cap=16)


def refusal(call, *args, **kwargs) -> Refusal:
    """The Refusal a call raises (failing the test if it returns)."""
    with pytest.raises(Refusal) as err:
        call(*args, **kwargs)
    return err.value


def torch_zip(value: object) -> bytes:
    """What torch.save writes today: a zip whose first member is archive/data.pkl."""
    buf = io.BytesIO()
    torch.save(value, buf)
    return buf.getvalue()


def safetensors(header: dict[str, object], body: bytes = b"") -> bytes:
    """A safetensors file from a header written as JSON and the raw data after it."""
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


# --- pickles and torch.save's zip ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["w.npz", "w.json", "w.safetensors", "W.NPZ"])
def test_a_torch_save_zip_uploaded_as_weights_is_refused_as_a_pickle(name):
    data = torch_zip({n: torch.eye(4, dtype=torch.float64) for n in NAMES})
    assert data[:4] == b"PK\x03\x04"  # a zip like any .npz, not a bare pickle
    with pytest.raises(WeightsError) as err:
        load_weights(name, data)
    assert err.value.reason == "pickle_refused"


def test_a_torch_save_zip_is_refused_as_an_attention_file_too():
    with pytest.raises(AttentionFileError) as err:
        load_attention("a.safetensors", torch_zip({"attentions": torch.ones(1, 1, 1, 1)}))
    assert err.value.reason == "pickle"


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickles_of_protocol_2_and_later_are_recognised(protocol):
    data = pickle.dumps({"w_q": [[1.0]]}, protocol=protocol)
    assert is_pickle(data) and pickled(data) and not is_torch_zip(data)


def test_torch_save_zips_are_recognised_by_their_first_member():
    data = torch_zip({"x": torch.zeros(2)})
    assert is_torch_zip(data) and pickled(data) and not is_pickle(data)
    assert is_torch_zip(zip_bytes({"data.pkl": b"\x80\x04N."}))  # a bare data.pkl first counts too


def test_an_npz_that_only_mentions_data_pkl_is_not_a_pickle_and_loads():
    """Only the first member's name counts: a note holding the words, or a later member so named, is not torch's."""
    members = {f"{n}.npy": npy_bytes(np.eye(3)) for n in NAMES} | {"notes": b"see archive/data.pkl", "data.pkl": b""}
    data = zip_bytes(members)
    assert b"data.pkl" in data and not pickled(data)
    assert torch.equal(load_weights("w.npz", data).w_q, torch.eye(3, dtype=torch.float64))


NOT_PICKLES = {  # named: a zip's bytes hold its time of writing, and xdist's workers must collect the same ids
    "empty": b"",
    "0x80 alone": b"\x80",
    "protocol 1": b"\x80\x01",
    "protocol 6": b"\x80\x06",
    "zip magic": b"PK\x03\x04",
    "npz": zip_bytes({"w_q.npy": b""}),
    "json": b"{}",
    "pickle protocol 0": pickle.dumps(1, 0),
}


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_a_safetensors_frame_that_begins_as_a_pickle_is_not_one(protocol):
    header = b'{"__metadata__":{}}'.ljust(protocol * 256 + 0x80)  # the length's low bytes: 0x80, then protocol
    data = len(header).to_bytes(8, "little") + header
    assert data[:2] == bytes([0x80, protocol]) and is_pickle(data) and not pickled(data)
    assert pickled(data[:-1])  # cut short, the frame no longer holds its header: the marker counts again


@pytest.mark.parametrize("data", NOT_PICKLES.values(), ids=NOT_PICKLES.keys())
def test_other_bytes_are_not_taken_for_pickles(data):
    """Protocols 0 and 1 are text-like and start with no marker: a reader refuses them for their format instead."""
    assert not pickled(data)


# --- bounded JSON ------------------------------------------------------------------------------------------------


def test_json_parses_within_its_rules():
    assert parse_json(b'{"a": [1, 2.5, null], "b": {"c": "\\u00e9"}}', RULES) == {"a": [1, 2.5, None], "b": {"c": "é"}}
    assert parse_json("[1]", RULES) == [1]  # text already decoded (a safetensors metadata value)
    assert parse_json(memoryview(b"xx[2]")[2:], RULES) == [2]


def test_a_repeated_key_is_refused_and_named_at_any_depth():
    assert refusal(parse_json, b'{"a": 1, "a": 2}', RULES).fmt == {"key": "a"}
    err = refusal(parse_json, b'{"x": [{"k": 1, "k": 1}]}', RULES)
    assert (err.reason, err.fmt) == ("json_duplicate_key", {"key": "k"})
    assert refusal(parse_json, json.dumps({"k" * 99: 0}).replace("}", ', "' + "k" * 99 + '": 1}'), RULES).fmt == {
        "key": clip("k" * 99)
    }


def test_containers_are_counted_and_capped_before_json_loads_runs(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("json.loads ran")

    monkeypatch.setattr(untrusted.json, "loads", never)
    err = refusal(parse_json, b"[" * 9 + b"{" * 8, RULES)
    assert (err.reason, err.fmt) == ("json_too_many", {"count": 17, "cap": 16})
    assert refusal(parse_json, b"[" + b"0," * 16 + b"0]", JsonRules(16, commas=True)).fmt["count"] == 17


def test_commas_count_only_when_asked():
    flat = b"[" + b"0," * 40 + b"0]"
    assert len(parse_json(flat, RULES)) == 41
    assert refusal(parse_json, flat, JsonRules(16, commas=True)).reason == "json_too_many"


def test_a_byte_order_mark_only_when_allowed():
    assert parse_json(b"\xef\xbb\xbf[1]", JsonRules(4, bom=True)) == [1]
    assert refusal(parse_json, b"\xef\xbb\xbf[1]", RULES).reason == "json_syntax"


@pytest.mark.parametrize(
    ("raw", "reason", "cause"),
    [
        (b"\xff[1]", "json_encoding", UnicodeDecodeError),
        (b'{"a": }', "json_syntax", json.JSONDecodeError),
        (b"[" * 20_000, "json_too_deep", RecursionError),
        (b"[" + b"9" * 5000 + b"]", "json_number_too_long", ValueError),
    ],
)
def test_bad_json_is_a_refusal_with_the_librarys_own_error(raw, reason, cause):
    err = refusal(parse_json, raw, JsonRules(10**6))
    assert err.reason == reason and isinstance(err.cause, cause) and err.detail
    if reason == "json_syntax":
        assert err.fmt == {"line": 1, "col": 7}


# --- safetensors headers -------------------------------------------------------------------------------------


def test_the_header_and_where_the_data_starts():
    data = safetensors({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8)
    header, start = st_header(data, RULES)
    assert header["t"]["shape"] == [2] and data[start:] == b"\0" * 8


@pytest.mark.parametrize(
    ("data", "declared"),
    [(b"", 0), (b"\x05\x00", 5), (struct.pack("<Q", 2**63) + b"{}", 2**63), (struct.pack("<Q", 1) + b"{}", 1)],
)
def test_a_header_length_that_does_not_fit_the_data_is_refused(data, declared):
    err = refusal(st_header, data, RULES)
    assert err.reason == "st_length" and err.fmt == {"declared": declared, "available": max(len(data) - 8, 0)}


def test_a_header_over_its_cap_is_refused_before_parsing():
    data = safetensors({"x": "y" * 100})
    err = refusal(st_header, data, RULES, max_bytes=50)
    assert (err.reason, err.fmt["cap"]) == ("st_too_big", 50)
    assert st_header(data, RULES, max_bytes=len(data))[0] == {"x": "y" * 100}


def test_a_header_must_start_with_a_brace_only_when_asked():
    data = struct.pack("<Q", 4) + b" {} "
    assert st_header(data, RULES) == ({}, 12)
    assert refusal(st_header, data, RULES, brace=True).reason == "st_length"


def test_a_header_that_is_not_an_object_is_refused():
    err = refusal(st_header, struct.pack("<Q", 2) + b"[]", RULES)
    assert err.reason == "st_not_object" and "a list" in err.detail


F_ONLY = {name: ST_DTYPES[name] for name in ("F32", "BF16")}


@pytest.mark.parametrize(
    ("raw", "reason", "field"),
    [
        ([1], "st_entry", "entry"),
        ({"dtype": 4, "shape": [1], "data_offsets": [0, 4]}, "st_entry", "dtype"),
        ({"dtype": "F 32", "shape": [1], "data_offsets": [0, 4]}, "st_entry", "dtype"),
        ({"dtype": "I8", "shape": [1], "data_offsets": [0, 1]}, "st_dtype", None),
        ({"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}, "st_entry", "shape"),
        ({"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}, "st_entry", "shape"),
        ({"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]}, "st_rank", None),
        ({"dtype": "F32", "shape": [1], "data_offsets": [0]}, "st_entry", "data_offsets"),
        ({"dtype": "F32", "shape": [1], "data_offsets": [0, 4.0]}, "st_entry", "data_offsets"),
    ],
)
def test_each_entry_field_is_typed_before_it_is_used(raw, reason, field):
    err = refusal(st_entry, "t", raw, F_ONLY, rank=1)
    assert err.reason == reason and err.fmt.get("field") == field and err.fmt["name"] == "t"


def test_a_checked_entry():
    entry = st_entry("t", {"dtype": "BF16", "shape": [2, 3], "data_offsets": [4, 16]}, F_ONLY)
    assert entry == Entry("BF16", np.dtype("<u2"), (2, 3), 4, 16) and entry.nbytes == 12


@pytest.mark.parametrize(
    ("start", "end", "size", "reason"),
    [
        (0, 16, 8, "st_offsets"),  # past the end of the data
        (8, 4, 16, "st_offsets"),  # backwards
        (10**30, 10**30 + 16, 32, "st_offsets"),  # absurd, quoted clipped
        (0, 12, 32, "st_data_size"),  # inside, but not what 4 float32 need
    ],
)
def test_offsets_out_of_range_or_of_the_wrong_size_are_refused(start, end, size, reason):
    err = refusal(st_span, "t", Entry("F32", np.dtype("<f4"), (4,), start, end), size)
    assert err.reason == reason
    assert err.fmt["start"] == clip(start) and err.fmt["end"] == clip(end) and err.fmt["size"] == size
    if reason == "st_data_size":
        assert (err.fmt["declared"], err.fmt["expected"]) == (end - start, 16)


def test_entries_may_overlap_each_read_on_its_own():
    """Shared bytes are allowed (as they were): each entry reads only its own declared, checked range."""
    data = safetensors(
        {
            "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
            "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]},
        },
        np.array([1.5, -2.0], dtype="<f4").tobytes(),
    )
    header, start = st_header(data, RULES)
    entries = {name: st_entry(name, header[name], F_ONLY) for name in ("a", "b")}
    for name, entry in entries.items():
        st_span(name, entry, len(data) - start)
    assert st_array(data, start, entries["a"]).tolist() == [1.5, -2.0]
    assert st_array(data, start, entries["b"]).tolist() == [-2.0]


def test_bfloat16_is_widened_to_float32_exactly():
    values = np.array([[1.5, -2.0], [0.0078125, 512.0]], dtype="<f4")
    raw = b"\xaa\xbb" + (values.view("<u4") >> 16).astype("<u2").tobytes()
    got = st_array(raw, 2, Entry("BF16", np.dtype("<u2"), (2, 2), 0, 8))
    assert got.dtype == np.float32 and np.array_equal(got, values)


# --- clip ----------------------------------------------------------------------------------------------------


def test_clip_flattens_cuts_and_makes_text_encodable():
    assert clip("  a\n\tb  ") == "a b"
    assert clip("x" * 41) == "x" * 39 + "…" and len(clip("x" * 500, 200)) == 200
    assert clip("y" * 40) == "y" * 40
    assert clip("\ud800ok").encode("utf-8") == b"\\ud800ok"
    assert clip([1, 2]) == "[1, 2]" and clip(None) == "None"


def test_a_refusal_carries_its_reason_fields_and_a_clipped_detail():
    err = Refusal("json_syntax", "z" * 500, line=1, col=2)
    assert (err.reason, err.fmt, err.detail) == ("json_syntax", {"line": 1, "col": 2}, "z" * 500)
    assert str(err) == f"json_syntax: {clip('z' * 500, untrusted.DETAIL_CHARS)}"


# --- every refusal becomes each reader's own error ------------------------------------------------------------

EXAMPLE_FIELDS = {
    "json_encoding": ("utf-8 ...", {}),
    "json_too_many": (None, {"count": 9, "cap": 8}),
    "json_syntax": ("Expecting value", {"line": 1, "col": 2}),
    "json_too_deep": ("maximum recursion depth exceeded", {}),
    "json_number_too_long": ("Exceeds the limit", {}),
    "json_duplicate_key": (None, {"key": "a"}),
    "st_length": ("header length 9", {"declared": 9, "available": 2}),
    "st_too_big": (None, {"size": 9, "cap": 8}),
    "st_not_object": ("the header is a list, not an object", {}),
    "st_entry": (None, {"name": "w_q", "field": "data_offsets"}),
    "st_dtype": (None, {"name": "w_q", "dtype": "C64", "allowed": "F32"}),
    "st_rank": (None, {"name": "w_q", "shape": "[1]"}),
    "st_offsets": (None, {"name": "w_q", "start": "0", "end": "9", "size": 4}),
    "st_data_size": (None, {"name": "w_q", "start": "0", "end": "4", "size": 8, "declared": 4, "expected": 8}),
}


def sentence_fields(sentence: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(sentence) if field}


ENTRY_FIELDS = {"dtype": "x", "allowed": "F32", "shape": "[1]"}  # what st_entry adds for a bad dtype or shape
CASES = [(reason, detail, fmt) for reason, (detail, fmt) in EXAMPLE_FIELDS.items()] + [
    ("st_entry", None, {"name": "w_q", "field": field, **ENTRY_FIELDS}) for field in ("entry", "dtype", "shape")
]


def test_the_examples_cover_every_reason():
    assert set(EXAMPLE_FIELDS) == set(untrusted.REASONS)


@pytest.mark.parametrize(("reason", "detail", "fmt"), CASES, ids=[f"{c[0]}-{c[2].get('field', '')}" for c in CASES])
def test_every_refusal_becomes_an_error_of_each_reader_with_a_sentence_in_both_languages(reason, detail, fmt):
    cause = ValueError(detail) if detail else None
    errors = [
        (weights_error(Refusal(reason, detail, cause=cause, **fmt), b"{}"), "lab.upload_"),
        (attnfile_error(Refusal(reason, detail, cause=cause, **fmt)), "attnfile_errors."),
    ]
    for err, prefix in errors:
        assert isinstance(err, WeightsError | AttentionFileError)
        for lang in LANGS:
            sentence = catalog(lang)[prefix + err.reason]
            assert sentence_fields(sentence) == set(err.fmt)
            assert sentence.format(**err.fmt)
