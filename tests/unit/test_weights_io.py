"""Uploaded weights: every accepted format round-trips, every bad file is refused with its own reason."""

from __future__ import annotations

import io
import json
import pickle
import re
import string
import struct
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from attnlab import weights_io
from attnlab.limits import MAX_D_MODEL, MAX_UPLOAD_BYTES, MAX_WEIGHT
from attnlab.multihead import NAMES, MultiHeadWeights
from attnlab.ui.app.i18n import LANGS, catalog
from attnlab.weights_io import WeightsError, edits_between, load_weights, to_json

ST_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I32": "<i4", "U8": "<u1", "BOOL": "|b1"}


def safetensors_bytes(mats: dict[str, np.ndarray], dtype: str = "F32", header_pad: int = 0) -> bytes:
    """A minimal safetensors writer (space-padding the header, as the format allows), for the tests only."""
    header, body = {}, b""
    for name, m in mats.items():
        raw = np.ascontiguousarray(m, dtype=ST_DTYPES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(m.shape), "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    return safetensors_raw(json.dumps(header).encode() + b" " * header_pad, body)


def safetensors_raw(header: bytes, body: bytes = b"", length: int | None = None) -> bytes:
    """A safetensors file from raw header text; `length` lets the first 8 bytes lie."""
    return struct.pack("<Q", len(header) if length is None else length) + header + body


def st_header(entries: dict[str, object]) -> bytes:
    """A safetensors file whose header is exactly `entries` over 64 bytes of body."""
    return safetensors_raw(json.dumps(entries).encode(), bytes(64))


def npy_bytes(m: np.ndarray) -> bytes:
    """One array as np.save writes it."""
    buf = io.BytesIO()
    np.save(buf, m, allow_pickle=True)
    return buf.getvalue()


def npz_bytes(mats: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    """An archive as np.savez (or savez_compressed) writes it."""
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **mats)
    return buf.getvalue()


def zip_bytes(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """An archive of raw members, each compressed with `method`."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as archive:
        for name, raw in members.items():
            archive.writestr(name, raw)
    return buf.getvalue()


def eye_members(d: int = 2, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Valid d x d members for the projections not in `skip`."""
    return {f"{name}.npy": npy_bytes(np.eye(d)) for name in NAMES if name not in skip}


def npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    """The header numpy writes before an array of this dtype and shape."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": descr, "fortran_order": False, "shape": shape})
    return out.getvalue()


def zeros_bomb(descr: str, shape: tuple[int, ...]) -> dict[str, bytes]:
    """w_q as a deflated member that decompresses to a huge array of zeros, the rest valid."""
    n = int(np.prod(shape)) * np.dtype(descr).itemsize
    return {**eye_members(skip=("w_q",)), "w_q.npy": npy_header(descr, shape) + bytes(n)}


def with_central_field(data: bytes, member: str, offset: int, value: int) -> bytes:
    """An archive whose central directory entry for `member` says `value` in one 4-byte field (16 CRC, 24 size)."""
    entry = data.rindex(b"PK\x01\x02", 0, data.rindex(member.encode()))
    return data[: entry + offset] + struct.pack("<I", value) + data[entry + offset + 4 :]


def with_file_size(data: bytes, member: str, size: int) -> bytes:
    """An archive whose central directory lies about one member's uncompressed size."""
    return with_central_field(data, member, 24, size)


def json_weights(cells: object, **extra: object) -> bytes:
    """A JSON weights file whose four matrices are all `cells`."""
    return json.dumps({**{name: cells for name in NAMES}, **extra}).encode()


def json_text(cells: str) -> bytes:
    """A JSON weights file with raw JSON text for every matrix (number spellings json.dumps never writes)."""
    return ("{" + ", ".join(f'"{name}": {cells}' for name in NAMES) + "}").encode()


EYE2 = [[1.0, 0.0], [0.0, 1.0]]
EYE4 = np.eye(4).tolist()

# One file per reason load_weights can give, each the smallest that shows it.
EXAMPLES: dict[str, tuple[str, bytes]] = {
    "too_big": ("w.json", b" " * (MAX_UPLOAD_BYTES + 1)),
    "extension": ("w.txt", b"{}"),
    "pickle_refused": ("w.json", pickle.dumps({"w_q": [[1.0]]})),
    "json_encoding": ("w.json", b"\xff\xfe{}"),
    "json_syntax": ("w.json", b"{not json"),
    "json_too_deep": ("w.json", b"[" * 20000),
    "json_too_many_values": ("w.json", b"[" + b"0," * weights_io.JSON_TOKENS + b"0]"),
    "json_number_too_long": ("w.json", json_text("[[" + "9" * 5000 + "]]")),
    "json_duplicate_key": ("w.json", b'{"w_q": 1, "w_q": 2}'),
    "json_not_object": ("w.json", b"[1, 2]"),
    "format": ("w.json", json_weights(EYE2, format="attnlab-weights/2")),
    "d_model_mismatch": ("w.json", json_weights(EYE2, d_model=3)),
    "missing": ("w.json", json.dumps({"w_q": EYE2}).encode()),
    "duplicate": ("w.json", json.dumps({**{name: EYE2 for name in NAMES}, "W_Q": EYE2}).encode()),
    "not_matrix": ("w.json", json_weights("abc")),
    "ragged": ("w.json", json_weights([[1.0, 2.0], [3.0]])),
    "not_number": ("w.json", json_weights([[1.0, True], [0.0, 1.0]])),
    "not_square": ("w.json", json_weights([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])),
    "size": ("w.json", json_weights([[1.0]])),
    "shape": ("w.json", json.dumps({name: EYE2 if name != "w_v" else np.eye(3).tolist() for name in NAMES}).encode()),
    "kv_shape": (
        "w.json",
        json.dumps(
            {"w_q": EYE4, "w_k": np.ones((4, 3)).tolist(), "w_v": np.ones((4, 3)).tolist(), "w_o": EYE4}
        ).encode(),
    ),
    "not_finite": ("w.json", json_text("[[1.0, NaN], [0, 1]]")),
    "too_large": ("w.json", json_weights([[1.0, 1e6], [0, 1]])),
    "dtype": ("w.safetensors", safetensors_bytes({name: np.eye(2) for name in NAMES}, "BOOL")),
    "data_size": ("w.npz", with_file_size(zip_bytes(eye_members()), "w_k.npy", 200)),
    "zip_unreadable": ("w.npz", b"not a zip"),
    "zip_method": ("w.npz", zip_bytes(eye_members(), zipfile.ZIP_BZIP2)),
    "zip_members": ("w.npz", zip_bytes({**eye_members(), **{f"x{i}": b"" for i in range(weights_io.MAX_MEMBERS)}})),
    "npy_header": ("w.npz", zip_bytes({**eye_members(skip=("w_o",)), "w_o.npy": b"\x93NUMPY\x01\x00\x04\x00{}  "})),
    "st_length": ("w.safetensors", safetensors_raw(b"{}", length=10**9)),
    "st_header": ("w.safetensors", safetensors_raw(b'{"w_q": [1, 2]}')),
    "st_entry": ("w.safetensors", st_header({name: {"dtype": "F32", "shape": "2x2"} for name in NAMES})),
    "st_offsets": (
        "w.safetensors",
        st_header({name: {"dtype": "F64", "shape": [2, 2], "data_offsets": [64, 96]} for name in NAMES}),
    ),
}


def refusal(name: str, data: bytes) -> WeightsError:
    """The WeightsError a file gets (failing the test if it loads)."""
    with pytest.raises(WeightsError) as err:
        load_weights(name, data)
    return err.value


@pytest.fixture
def weights() -> MultiHeadWeights:
    return MultiHeadWeights.random(6, seed=3)


def test_json_round_trip_is_exact(weights):
    back = load_weights("w.json", to_json(weights))
    for name in NAMES:
        assert torch.equal(getattr(back, name), getattr(weights, name))


def test_grouped_weights_round_trip_in_every_format():
    """W_K and W_V narrower than W_Q (key/value heads shared by groups of query heads) load as they were saved."""
    grouped = MultiHeadWeights.random(8, seed=2, n_heads=4, n_kv_heads=2)
    mats = {name: m.numpy() for name, m in grouped.as_dict().items()}
    for back in (
        load_weights("w.json", to_json(grouped)),
        load_weights("w.npz", npz_bytes(mats)),
        load_weights("w.safetensors", safetensors_bytes(mats, "F64")),
    ):
        assert back.d_kv == 4 and all(torch.equal(getattr(back, n), getattr(grouped, n)) for n in NAMES)
    lopsided = {**mats, "w_v": np.ones((8, 8))}
    assert refusal("w.npz", npz_bytes(lopsided)).reason == "kv_shape"


def test_npz_and_safetensors_load(weights):
    mats = {name: m.numpy() for name, m in weights.as_dict().items()}
    assert torch.equal(load_weights("w.npz", npz_bytes(mats)).w_v, weights.w_v)
    assert torch.equal(load_weights("W.NPZ", npz_bytes(mats, compressed=True)).w_k, weights.w_k)
    got = load_weights("w.safetensors", safetensors_bytes({k.upper(): v for k, v in mats.items()}, "F64"))
    assert torch.equal(got.w_o, weights.w_o)
    got32 = load_weights("w.safetensors", safetensors_bytes(mats, "F32"))
    assert torch.allclose(got32.w_q, weights.w_q, atol=1e-6)


@pytest.mark.parametrize("descr", ["|i1", ">i2", "<i4", "<i8", "|u1", "<u2", ">u8", "<f2", ">f4", "<f8"])
def test_every_real_npy_dtype_loads_exactly(descr):
    """Integers and half floats are real numbers: they load, exactly, since float64 holds every allowed value."""
    values = np.array([[3, 7], [100, 0]]) * (1 if descr[1] == "u" else -1)
    got = load_weights("w.npz", zip_bytes({f"{n}.npy": npy_bytes(values.astype(descr)) for n in NAMES}))
    assert np.array_equal(got.w_q.numpy(), values)


def test_integer_safetensors_load_exactly():
    m = np.array([[-3, 7], [1000, 0]])
    assert np.array_equal(load_weights("w.safetensors", safetensors_bytes({n: m for n in NAMES}, "I32")).w_v, m)


def test_bfloat16_safetensors_are_widened_exactly():
    m = np.array([[1.5, -2.0], [0.0078125, 512.0]], dtype="<f4")  # all exact in bfloat16
    raw = (m.view("<u4") >> 16).astype("<u2").tobytes()
    header = {n: {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]} for n in NAMES}
    got = load_weights("w.safetensors", safetensors_raw(json.dumps(header).encode(), raw))
    assert np.array_equal(got.w_k.numpy(), m)


def test_fortran_order_npy_members_keep_their_layout():
    m = np.asfortranarray(np.arange(9.0).reshape(3, 3))
    got = load_weights("w.npz", zip_bytes({f"{n}.npy": npy_bytes(m) for n in NAMES}))
    assert np.array_equal(got.w_o.numpy(), m)
    assert got.w_o.is_contiguous()


def test_a_valid_safetensors_whose_first_byte_is_0x80_is_not_a_pickle():
    """The first 8 bytes are the header length: 0x280 starts with 80 02, like a protocol-2 pickle."""
    mats = {name: np.eye(3) for name in NAMES}
    plain = safetensors_bytes(mats, "F64")
    data = safetensors_bytes(mats, "F64", header_pad=0x280 - (struct.unpack("<Q", plain[:8])[0]))
    assert data[:2] == b"\x80\x02"
    assert torch.equal(load_weights("w.safetensors", data).w_q, torch.eye(3, dtype=torch.float64))


@pytest.mark.parametrize("name", ["w.npz", "w.safetensors", "w.json"])
def test_pickles_are_refused_by_content_in_every_format(name):
    assert refusal(name, pickle.dumps({"w_q": np.eye(2)}, protocol=4)).reason == "pickle_refused"


@pytest.mark.parametrize("suffix", weights_io.PICKLE_SUFFIXES)
def test_pickles_are_refused_by_extension_without_being_read(suffix):
    assert refusal(f"model{suffix.upper()}", b"PK\x03\x04whatever").reason == "pickle_refused"


@pytest.mark.parametrize("reason", sorted(EXAMPLES))
def test_each_bad_file_is_refused_with_its_reason_and_a_sentence_in_both_languages(reason):
    err = refusal(*EXAMPLES[reason])
    assert err.reason == reason
    for lang in LANGS:
        sentence = catalog(lang)[f"lab.upload_{reason}"]
        assert {field for _, field, _, _ in string.Formatter().parse(sentence) if field} == set(err.fmt)
        assert sentence.format(**err.fmt)


def test_every_reason_the_loader_can_give_has_an_example_and_both_sentences():
    package = Path(weights_io.__file__).parent
    source = "\n".join(path.read_text(encoding="utf-8") for path in sorted(package.glob("*.py")))
    raised = set(re.findall(r'(?:WeightsError|unreadable)\(\s*(?:\w+,\s*)?"(\w+)"', source))
    assert raised == set(EXAMPLES)
    for lang in LANGS:
        assert {f"lab.upload_{reason}" for reason in raised} <= set(catalog(lang))


@pytest.mark.parametrize(
    ("cells", "reason", "cell"),
    [
        ("[[1e999, 0], [0, 0]]", "not_finite", "w_q[0, 0]"),
        ("[[0, -Infinity], [0, 0]]", "not_finite", "w_q[0, 1]"),
        ("[[0, 0], [1" + "0" * 400 + ", 0]]", "too_large", "w_q[1, 0]"),
        ("[[0, 0], [0, null]]", "not_number", "w_q[1, 1]"),
        ('[[0, "1"], [0, 0]]', "not_number", "w_q[0, 1]"),
        ("[[0, false], [0, 0]]", "not_number", "w_q[0, 1]"),
        ("[[0, [1]], [0, 0]]", "not_number", "w_q[0, 1]"),
        ('[[0, {"re": 1}], [0, 0]]', "not_number", "w_q[0, 1]"),
    ],
)
def test_json_cells_that_are_not_finite_moderate_numbers_are_named(cells, reason, cell):
    err = refusal("w.json", json_text(cells))
    assert (err.reason, err.fmt["cell"]) == (reason, cell)


def test_library_words_go_to_detail_not_into_the_sentence():
    err = refusal("w.json", b'{"w_q": [[1, 2], [3, 4]],}')
    assert err.reason == "json_syntax" and err.fmt == {"line": 1, "col": 26}
    assert err.detail and "property name" in err.detail
    assert refusal("w.json", json_weights([[0, "x"], [0, 0]])).detail == "found a string"
    assert refusal("w.json", json_weights([[1.0]])).detail is None


def test_json_may_start_with_a_bom_and_names_are_matched_in_any_case():
    doc = {name.upper(): EYE2 for name in NAMES}
    assert load_weights("W.JSON", b"\xef\xbb\xbf" + json.dumps(doc).encode()).d_model == 2


def test_a_non_ascii_key_that_lowercases_to_a_name_is_not_that_name():
    doc = {**{name: EYE2 for name in NAMES if name != "w_k"}, "w_\u212a": EYE2}  # KELVIN SIGN lowercases to k
    assert refusal("w.json", json.dumps(doc).encode()).fmt["name"] == "w_k"


def test_extra_npz_members_are_never_decompressed():
    """The extra member's deflate stream is garbage: reading it would fail, so loading proves it was skipped."""
    data = zip_bytes({**eye_members(), "notes.npy": npy_bytes(np.zeros((512, 512)))})
    start = data.index(b"notes.npy") + len(b"notes.npy")
    broken = data[:start] + bytes(b ^ 0xFF for b in data[start : start + 64]) + data[start + 64 :]
    assert load_weights("w.npz", broken).d_model == 2


@pytest.mark.parametrize(
    ("members", "reason"),
    [
        (
            eye_members(skip=("w_q",)) | {"w_q.npy": npy_bytes(np.array([{"evil": 1}, None], dtype=object))},
            "pickle_refused",
        ),
        (eye_members(skip=("w_q",)) | {"w_q.npy": pickle.dumps([1.0], protocol=2)}, "pickle_refused"),
        (eye_members(skip=("w_q",)) | {"w_q.npy": npy_bytes(np.eye(2, dtype=bool))}, "dtype"),
        (eye_members(skip=("w_q",)) | {"w_q.npy": npy_bytes(np.eye(2, dtype=np.complex128))}, "dtype"),
        (eye_members(skip=("w_q",)) | {"w_q.npy": npy_bytes(np.eye(2, dtype=np.longdouble))}, "dtype"),
        (eye_members(skip=("w_q",)) | {"w_q.npy": npy_bytes(np.array([["a", "b"], ["c", "d"]]))}, "dtype"),
        (eye_members(skip=("w_q",)) | {"w_q.npy": npy_bytes(np.zeros(2, dtype="f8,f8"))}, "npy_header"),
        (eye_members(skip=("w_q",)) | {"w_q.npy": npy_bytes(np.eye(2))[:-3]}, "data_size"),
        (eye_members() | {"W_Q": npy_bytes(np.eye(2))}, "duplicate"),
        (eye_members(skip=("w_q",)) | {"w_q.npy": npy_header("<f8", (2, 2)) + bytes(40)}, "data_size"),
        (zeros_bomb("|u1", (5792, 5792)), "size"),
        (eye_members(skip=("w_q",)) | {"w_q.npy": npy_header("<f8", (3,)) + bytes(24)}, "not_square"),
    ],
)
def test_npz_members_are_checked_before_their_data_is_read(members, reason):
    assert refusal("w.npz", zip_bytes(members)).reason == reason


def test_a_central_directory_that_lies_about_a_member_size_is_refused():
    data = zip_bytes(eye_members())
    assert refusal("w.npz", with_file_size(data, "w_v.npy", 2**31)).reason == "data_size"
    assert refusal("w.npz", with_file_size(data, "w_v.npy", 200)).fmt == {
        "name": "w_v",
        "declared": 200,
        "expected": 160,
    }


def test_a_truncated_or_corrupted_npz_is_unreadable():
    data = zip_bytes(eye_members())
    assert refusal("w.npz", data[: len(data) // 2]).reason == "zip_unreadable"
    assert refusal("w.npz", with_central_field(data, "w_k.npy", 16, 0)).reason == "zip_unreadable"


@pytest.mark.parametrize(
    ("entries", "reason"),
    [
        ({name: {"dtype": "F64", "shape": [2, 2], "data_offsets": [0, 32]} for name in NAMES}, None),
        ({name: {"dtype": "F64", "shape": [True, 2], "data_offsets": [0, 32]} for name in NAMES}, "st_entry"),
        ({name: {"dtype": "F64", "shape": [2, 2], "data_offsets": [0, 32.0]} for name in NAMES}, "st_entry"),
        ({name: {"dtype": "F64", "shape": [2, 2], "data_offsets": [0]} for name in NAMES}, "st_entry"),
        ({name: {"dtype": 8, "shape": [2, 2], "data_offsets": [0, 32]} for name in NAMES}, "st_entry"),
        ({name: {"dtype": "C64", "shape": [2, 2], "data_offsets": [0, 32]} for name in NAMES}, "dtype"),
        ({name: {"dtype": "F64", "shape": [2, 2], "data_offsets": [32, 0]} for name in NAMES}, "st_offsets"),
        ({name: {"dtype": "F64", "shape": [2, 2], "data_offsets": [0, 24]} for name in NAMES}, "data_size"),
        ({name: {"dtype": "F64", "shape": [10**5, 10**5], "data_offsets": [0, 8 * 10**10]} for name in NAMES}, "size"),
        ({name: {"dtype": "F64", "shape": [2, 2, 1], "data_offsets": [0, 32]} for name in NAMES}, "not_square"),
        ({**{n: {"dtype": "F64", "shape": [2, 2], "data_offsets": [0, 32]} for n in NAMES}, "b": 1}, "st_header"),
        ({**{n: {"dtype": "F64", "shape": [2, 2], "data_offsets": [0, 32]} for n in NAMES}, "b": {}}, None),
    ],
)
def test_safetensors_headers_are_checked_before_any_tensor_is_read(entries, reason):
    data = st_header(entries)
    if reason is None:
        assert load_weights("w.safetensors", data).d_model == 2
    else:
        assert refusal("w.safetensors", data).reason == reason


@pytest.mark.parametrize("length", [0, 1, 2**63, 2**64 - 1, 65])
def test_a_safetensors_header_length_that_does_not_fit_is_refused(length):
    assert refusal("w.safetensors", safetensors_raw(b"{}" + bytes(62), length=length)).reason == "st_length"


def test_a_deflate_bomb_is_refused_after_reading_only_its_header():
    """A 33 MB member compressed to 33 KB: refused on its declared shape, never decompressed."""
    data = zip_bytes(zeros_bomb("|u1", (5792, 5792)))
    assert len(data) < 64 * 1024
    tracemalloc.start()
    try:
        assert refusal("w.npz", data).fmt["d"] == "5792"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024


def test_values_past_the_cap_and_non_finite_values_are_refused_in_binary_formats():
    m = np.eye(2)
    m[1, 0] = MAX_WEIGHT * 2
    assert refusal("w.npz", npz_bytes({n: m for n in NAMES})).fmt["cell"] == "w_q[1, 0]"
    m[0, 1] = np.nan
    assert refusal("w.safetensors", safetensors_bytes({n: m for n in NAMES}, "F64")).reason == "not_finite"


def test_the_largest_allowed_matrices_load_from_every_format():
    mats = {name: np.full((MAX_D_MODEL, MAX_D_MODEL), MAX_WEIGHT) for name in NAMES}
    for name, data in (
        ("w.json", json_weights(mats["w_q"].tolist())),
        ("w.npz", npz_bytes(mats, compressed=True)),
        ("w.safetensors", safetensors_bytes(mats, "F64")),
    ):
        assert load_weights(name, data).d_model == MAX_D_MODEL


def test_edits_between_lists_exactly_the_changed_cells(weights):
    changed = weights.replace(
        w_k=weights.w_k.clone().index_put_(
            (torch.tensor([1]), torch.tensor([2])), torch.tensor(9.0, dtype=torch.float64)
        )
    )
    assert edits_between(weights, changed) == {("w_k", 1, 2): 9.0}
    assert edits_between(weights, weights) == {}
