"""Fuzzing load_weights with files shaped like the real formats, and memory bounds on crafted bombs.

Whatever the bytes and the file name, load_weights gives a valid MultiHeadWeights (square, d_model
within the caps, finite, moderate) or a WeightsError whose reason has a sentence in both languages.
The strategies build JSON, .npz and safetensors files that are nearly right, lie about themselves,
or are valid files truncated and bit-flipped; scripts/fuzz_readers.py --target weights runs them far longer.
"""

from __future__ import annotations

import io
import json
import math
import string
import struct
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab.limits import MAX_D_MODEL, MAX_UPLOAD_BYTES, MAX_WEIGHT, MIN_D_MODEL
from attnlab.multihead import NAMES, MultiHeadWeights
from attnlab.ui.app.i18n import LANGS, catalog
from attnlab.weights_io import (
    JSON_TOKENS,
    MAX_MEMBERS,
    PICKLE_SUFFIXES,
    SAFETENSORS_DTYPES,
    WeightsError,
    load_weights,
)
from tests.unit.test_weights_io import npy_header, safetensors_raw, with_file_size, zip_bytes

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
MEMORY_BOUND = 3 * MAX_UPLOAD_BYTES  # what one upload may make the loader allocate at its peak


def outcome(name: str, data: bytes) -> str:
    """Load one file and check the contract: 'accepted' or the refusal's reason; anything else fails the test."""
    try:
        weights = load_weights(name, data)
    except WeightsError as err:
        for lang in LANGS:
            sentence = catalog(lang)[f"lab.upload_{err.reason}"]
            assert {f for _, f, _, _ in string.Formatter().parse(sentence) if f} == set(err.fmt), err.reason
            sentence.format(**err.fmt)
        assert err.detail is None or (isinstance(err.detail, str) and len(err.detail) <= 200)
        return err.reason
    assert isinstance(weights, MultiHeadWeights)
    d = weights.d_model
    assert MIN_D_MODEL <= d <= MAX_D_MODEL
    for m in weights.as_dict().values():
        assert m.shape == (d, d) and m.isfinite().all() and m.abs().max() <= MAX_WEIGHT
    return "accepted"


# --- shared pieces ----------------------------------------------------------------------------------------

SUFFIXES = [".json", ".npz", ".safetensors", *PICKLE_SUFFIXES, ".txt", ""]
FILE_NAMES = st.one_of(
    st.tuples(st.sampled_from(["w", "W", "weights.v2", ""]), st.sampled_from(SUFFIXES)).map("".join),
    st.text(max_size=12),
)
OTHER_KEYS = st.sampled_from(["b_q", "notes", "w_x", "", "w_\u212a", "W_Q ", "ww_q", "__metadata__"])
SIZES = st.integers(MIN_D_MODEL, 6)
BAD_SIZES = st.sampled_from([0, 1, MAX_D_MODEL + 1])
CELLS = st.floats(-MAX_WEIGHT, MAX_WEIGHT) | st.integers(-int(MAX_WEIGHT), int(MAX_WEIGHT)).map(float)


def lies(*kinds: str) -> st.SearchStrategy[str | None]:
    """At most one lie per file, none in about a third of them, so most checks are reached with the rest valid."""
    return st.sampled_from([None] * (len(kinds) // 2 + 1) + list(kinds))


@st.composite
def matrices(draw: st.DrawFn, d: int) -> dict[str, np.ndarray]:
    """Four d x d float64 matrices within the caps (zeros past the largest size, so a draw stays small)."""
    if d > 6:
        return {name: np.zeros((d, d)) for name in NAMES}
    cells = draw(st.lists(CELLS, min_size=4 * d * d, max_size=4 * d * d))
    return {name: np.array(cells[i * d * d : (i + 1) * d * d]).reshape(d, d) for i, name in enumerate(NAMES)}


# --- JSON: text written by hand, so every number spelling, nesting and repeated key can appear ---------------

JSON_NUMBERS = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(300, 6000).map(lambda n: "9" * n),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e-999", "-0", "1E+2", "2e-3"]),
    st.sampled_from(["01", "+1", ".5", "1.", "0x10", "1e", "--1", "nan", "inf"]),  # not JSON: syntax errors
)
JSON_SCALARS = st.one_of(JSON_NUMBERS, st.sampled_from(["true", "false", "null"]), st.text(max_size=6).map(json.dumps))


def json_array(items: list[str]) -> str:
    """A JSON array from item texts."""
    return "[" + ", ".join(items) + "]"


def json_object(pairs: list[tuple[str, str]]) -> str:
    """A JSON object from (key, value text) pairs; keys may repeat, as a hostile file's can."""
    return "{" + ", ".join(f"{json.dumps(key)}: {value}" for key, value in pairs) + "}"


JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5).map(json_array),
        st.lists(st.tuples(OTHER_KEYS | st.sampled_from(NAMES), inner), max_size=5).map(json_object),
    ),
    max_leaves=20,
)


JSON_PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
).map(json.dumps)  # valid JSON of every kind, for the keys a reader must ignore


def json_rows(m: np.ndarray) -> list[list[str]]:
    """A matrix as rows of JSON number texts."""
    return [[json.dumps(float(x)) for x in row] for row in m]


@st.composite
def json_weights(draw: st.DrawFn) -> bytes:
    """A weights file as to_json writes it, names in any case and keys in any order, with at most one lie."""
    lie = draw(
        lies(
            "poison", "ragged", "mixed", "size", "missing", "case", "repeat", "format", "d_model", "top", "deep", "flat"
        )
    )
    d = draw(BAD_SIZES if lie == "size" else SIZES)
    rows = {name: json_rows(m) for name, m in draw(matrices(d)).items()}
    victim = draw(st.sampled_from(NAMES))
    if lie == "poison" and d:
        cell = draw(st.one_of(JSON_SCALARS, JSON_VALUES))
        rows[victim][draw(st.integers(0, d - 1))][draw(st.integers(0, d - 1))] = cell
    if lie == "deep" and d:
        rows[victim][0][0] = "[" * draw(st.integers(1, 3000)) + "0" + "]" * draw(st.integers(1, 3000))
    if lie == "ragged" and d:
        rows[victim][draw(st.integers(0, d - 1))].pop()
    if lie == "mixed":
        rows[victim] = json_rows(np.zeros((d + 1, d + 1)))
    pairs = [
        (draw(st.sampled_from([name, name.upper()])), json_array([json_array(r) for r in rows[name]])) for name in NAMES
    ]
    if lie == "flat":  # a matrix that is not a list of lists: a row alone, a number, text, an object
        pairs[NAMES.index(victim)] = (
            victim,
            draw(st.one_of(JSON_PLAIN, st.just(json_array(rows[victim][0] if d else [])))),
        )
    fmt = (
        draw(st.sampled_from(['"attnlab-weights/2"', "1", "null", '"attnlab-weights/1 "'])) if lie == "format" else None
    )
    declared = draw(st.sampled_from([str(d + 1), "true", f'"{d}"', f"{d}.0", "-1"])) if lie == "d_model" else None
    pairs += [("format", fmt or '"attnlab-weights/1"')] * (lie == "format" or draw(st.booleans()))
    pairs += [("d_model", declared or str(d))] * (lie == "d_model" or draw(st.booleans()))
    pairs += draw(st.lists(st.tuples(OTHER_KEYS, JSON_PLAIN), max_size=2, unique_by=lambda pair: pair[0]))
    if lie == "missing":
        pairs.pop(draw(st.integers(0, 3)))
    if lie in ("case", "repeat"):
        pairs.append((victim.upper() if lie == "case" else pairs[0][0], pairs[0][1]))
    pairs = draw(st.permutations(pairs))
    text = json_array([value for _, value in pairs]) if lie == "top" else json_object(pairs)
    return (draw(st.sampled_from(["", "", "\ufeff", " \n\t"])) + text).encode()


@st.composite
def json_files(draw: st.DrawFn) -> bytes:
    """Mostly weights-shaped documents; sometimes any JSON value, deep nesting, or as many lists as allowed."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(JSON_VALUES).encode()
    if kind == 1:
        n = draw(st.integers(1, 40_000))
        return ("[" * n + "]" * draw(st.sampled_from([n, 0, n - 1]))).encode()
    if kind == 2:
        return ("[" + "[]," * draw(st.integers(JSON_TOKENS // 2 - 9, JSON_TOKENS // 2 + 9)) + "[]]").encode()
    return draw(json_weights())


# --- .npz: archives as np.savez writes them, with at most one lie in a needed member or the directory ---------

REAL_DESCRS = ["<f8", ">f8", "<f4", ">f4", "<f2", "|i1", "<i2", ">i4", "<i8", "|u1", "<u2", "<u4", ">u8"]
BAD_DESCRS = ["|b1", "<c16", "|O", "<U3", "<f16", "|V8", "<M8[D]", "f", "<f3", "|S2"]
BAD_SHAPES = [(1,), (1, 2), (), (1, 1, 1), (2, 2**40), (10**9, 10**9)]
METHODS = [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]
ODD_METHODS = [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


def fit(m: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """m in dtype, integers clipped into the dtype's range first (so a drawn file is not too large by wrapping)."""
    if dtype.kind in "iu":
        m = np.clip(np.round(m), np.iinfo(dtype).min, np.iinfo(dtype).max)
    with np.errstate(all="ignore"):
        return np.asarray(m).astype(dtype)


def npy(descr: str, m: np.ndarray, fortran: bool = False, shape: tuple[int, ...] | None = None) -> bytes:
    """A .npy member: numpy's header for `descr` and `shape` (m's by default) over m's bytes in that dtype."""
    raw = fit(m, np.dtype(descr) if descr in REAL_DESCRS else np.dtype("<f8"))
    header = npy_header(descr, m.shape if shape is None else shape)
    if fortran:
        header = header.replace(b"False", b"True ")  # same length
    return header + (raw.tobytes(order="F") if fortran else raw.tobytes())


@st.composite
def npz_files(draw: st.DrawFn) -> bytes:
    """The four members (names in any case, with or without .npy) and extras, stored or deflated."""
    lie = draw(lies("dtype", "shape", "size", "short", "long", "directory", "method", "missing", "case", "raw", "many"))
    d = draw(BAD_SIZES if lie == "size" else SIZES)
    members = []
    for name, m in draw(matrices(d)).items():
        key = draw(st.sampled_from([name, name.upper()])) + draw(st.sampled_from([".npy", ".npy", ".NPY", ""]))
        members.append(
            [key, npy(draw(st.sampled_from(REAL_DESCRS)), m, draw(st.booleans())), draw(st.sampled_from(METHODS))]
        )
    victim = members[draw(st.integers(0, 3))]
    if lie == "dtype":
        victim[1] = npy(draw(st.sampled_from(BAD_DESCRS)), np.eye(d))
    if lie == "shape":
        shape = draw(st.sampled_from([*BAD_SHAPES, (d + 1, d + 1)]))
        victim[1] = npy("<f8", np.zeros(min(math.prod(shape), 64)), shape=shape)
    if lie in ("short", "long"):
        victim[1] = victim[1][:-1] if lie == "short" else victim[1] + bytes(8)
    if lie == "method":
        victim[2] = draw(st.sampled_from(ODD_METHODS))
    if lie == "raw":
        victim[1] = draw(
            st.sampled_from([b"", b"\x80\x04garbage.", b"\x93NUMPY\x01\x00\xff\xff{", b"\x93NUMPY\x09\x00"])
        )
    if lie == "missing":
        members.remove(victim)
    if lie == "case":
        members.append([victim[0].swapcase(), victim[1], victim[2]])
    extras = draw(
        st.lists(st.tuples(OTHER_KEYS, st.binary(max_size=64), st.sampled_from(METHODS + ODD_METHODS)), max_size=3)
    )
    extras += [(f"x{i}", b"", zipfile.ZIP_STORED) for i in range(MAX_MEMBERS)] if lie == "many" else []
    data = zip_archive([*members, *extras])
    if lie == "directory":
        entries = [i for i in range(len(data) - 3) if data[i : i + 4] == b"PK\x01\x02"]
        entry, field = draw(st.sampled_from(entries)), draw(st.sampled_from([16, 20, 24, 42]))  # CRC, sizes, offset
        value = draw(st.sampled_from([0, 1, 2**31, 2**32 - 1]) | st.integers(0, 2**32 - 1))
        data = data[: entry + field] + struct.pack("<I", value) + data[entry + field + 4 :]
    return data


def zip_archive(members: list) -> bytes:
    """An archive of (name, bytes, method) members; repeated names are written as asked."""
    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w") as archive:
        warnings.simplefilter("ignore")  # zipfile warns about a repeated name: here it is the point
        for name, raw, method in members:
            archive.writestr(zipfile.ZipInfo(name), raw, compress_type=method)
    return buf.getvalue()


# --- safetensors: headers whose entries, types and offsets may lie, over a body that may not match ----------

ST_KINDS = list(SAFETENSORS_DTYPES)
BAD_KINDS = ["BOOL", "F8_E4M3", "C64", "f64", "", 7, None, "F64 ", "x" * 40]
BAD_ST_SHAPES = [[1], [1, 2], [], [True, True], [-2, -2], [2, 2**70], "2x2", [2, 1.5], None]


def st_encode(m: np.ndarray, kind: str) -> bytes:
    """A matrix's bytes as safetensors stores it in dtype `kind` (bfloat16: the top half of each float32)."""
    if kind == "BF16":
        return (fit(m, np.dtype("<f4")).view("<u4") >> 16).astype("<u2").tobytes()
    return fit(m, np.dtype(SAFETENSORS_DTYPES[kind])).tobytes()


@st.composite
def safetensors_files(draw: st.DrawFn) -> bytes:
    """Four entries (names in any case) in any real dtype, extras and __metadata__, with at most one lie."""
    lie = draw(lies("dtype", "shape", "offsets", "length", "top", "entry", "missing", "case", "size", "values", "cut"))
    d = draw(BAD_SIZES if lie == "size" else SIZES)
    header, body = {}, b""
    for name, m in draw(matrices(d)).items():
        kind = draw(st.sampled_from(ST_KINDS))
        if lie == "values" and d:
            m[draw(st.integers(0, d - 1)), 0] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 2 * MAX_WEIGHT, 1e300]))
        raw = st_encode(m, kind)
        header[draw(st.sampled_from([name, name.upper()]))] = {
            "dtype": kind,
            "shape": [d, d],
            "data_offsets": [len(body), len(body) + len(raw)],
        }
        body += raw
    victim = draw(st.sampled_from(sorted(header)))
    start, end = header[victim]["data_offsets"]
    if lie == "dtype":
        header[victim]["dtype"] = draw(st.sampled_from(BAD_KINDS))
    if lie == "shape":
        header[victim]["shape"] = draw(st.sampled_from(BAD_ST_SHAPES))
    if lie == "offsets":
        header[victim]["data_offsets"] = draw(
            st.sampled_from(
                [
                    [start, end - 1],
                    [end, start],
                    [start],
                    [start, 2**64],
                    [0, len(body) + 8],
                    "x",
                    [start, 1.0 * end],
                    None,
                ]
            )
        )
    if lie == "entry":
        header[victim] = draw(st.sampled_from([[start, end], "F64", 0, None]))
    if lie == "missing":
        del header[victim]
    if lie == "case":
        header[victim.swapcase()] = dict(header[victim])
    header.update(
        draw(
            st.dictionaries(
                OTHER_KEYS,
                st.just({"dtype": "F64", "shape": [10**6], "data_offsets": [0, 10**9]})
                | st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
                max_size=2,
            )
        )
    )
    text = draw(JSON_VALUES).encode() if lie == "top" else json.dumps(header).encode()
    text = text[: -draw(st.integers(1, 4))] if lie == "cut" else text + b" " * draw(st.integers(0, 8))
    length = len(text) + (draw(st.sampled_from([-1, 1, -len(text), 2**32, 2**63])) if lie == "length" else 0)
    return struct.pack("<Q", max(length, 0)) + text + body


# --- mutations of valid files --------------------------------------------------------------------------------


@st.composite
def valid_files(draw: st.DrawFn) -> tuple[str, bytes, dict[str, np.ndarray]]:
    """A valid file in one of the three formats (d_model 2..6, values within the caps) and the matrices it holds."""
    d = draw(st.integers(2, 6))
    mats = {
        name: np.array(draw(st.lists(st.floats(-MAX_WEIGHT, MAX_WEIGHT), min_size=d * d, max_size=d * d))).reshape(d, d)
        for name in NAMES
    }
    kind = draw(st.sampled_from(["json", "npz", "npz-compressed", "safetensors"]))
    if kind == "json":
        return "w.json", json.dumps({name: m.tolist() for name, m in mats.items()}).encode(), mats
    if kind.startswith("npz"):
        buf = io.BytesIO()
        (np.savez_compressed if kind.endswith("compressed") else np.savez)(buf, **mats)
        return "w.npz", buf.getvalue(), mats
    raw = b"".join(m.astype("<f8").tobytes() for m in mats.values())
    header = {
        n: {"dtype": "F64", "shape": [d, d], "data_offsets": [i * d * d * 8, (i + 1) * d * d * 8]}
        for i, n in enumerate(NAMES)
    }
    return "w.safetensors", safetensors_raw(json.dumps(header).encode(), raw), mats


@st.composite
def mutated_files(draw: st.DrawFn) -> tuple[str, bytes]:
    """A valid file truncated, bit-flipped, or with a slice overwritten or deleted."""
    name, data, _ = draw(valid_files())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        edit = draw(st.sampled_from(["truncate", "flip", "overwrite", "delete", "insert"]))
        if edit == "truncate":
            data = data[:at]
        elif edit == "flip" and data:
            data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]
        elif edit == "overwrite":
            patch = draw(st.binary(min_size=1, max_size=8))
            data = data[:at] + patch + data[at + len(patch) :]
        elif edit == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 16)) :]
        else:
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    return name, data


# --- properties ---------------------------------------------------------------------------------------------


@FUZZ
@given(name=st.sampled_from(["w.json", "W.JSON"]), data=json_files())
def test_any_json_document_loads_or_is_refused_with_a_reason(name, data):
    outcome(name, data)


@FUZZ
@given(data=npz_files())
def test_any_npz_archive_loads_or_is_refused_with_a_reason(data):
    outcome("w.npz", data)


@FUZZ
@given(data=safetensors_files())
def test_any_safetensors_file_loads_or_is_refused_with_a_reason(data):
    outcome("w.safetensors", data)


@FUZZ
@given(file=mutated_files())
def test_truncated_and_bit_flipped_files_load_or_are_refused_with_a_reason(file):
    outcome(*file)


@FUZZ
@given(name=FILE_NAMES, data=st.binary(max_size=256))
def test_any_bytes_under_any_name_load_or_are_refused_with_a_reason(name, data):
    outcome(name, data)


@FUZZ
@given(file=valid_files())
def test_valid_files_load_with_exactly_their_values(file):
    name, data, mats = file
    assert outcome(name, data) == "accepted"
    loaded = load_weights(name, data)
    for matrix, values in mats.items():
        assert np.array_equal(getattr(loaded, matrix).numpy(), values)


# --- memory ---------------------------------------------------------------------------------------------------


def zeros_member(descr: str, shape: tuple[int, ...]) -> bytes:
    """A .npy member of zeros; deflate shrinks it about a thousandfold."""
    return npy_header(descr, shape) + bytes(math.prod(shape) * np.dtype(descr).itemsize)


def eye_npz_members() -> dict[str, bytes]:
    """The four projections as valid 2 x 2 members."""
    return {f"{name}.npy": zeros_member("<f8", (2, 2)) for name in NAMES}


BOMBS = {
    "npz: 4 members of 4096^2 uint8 zeros": lambda: zip_bytes(
        {f"{n}.npy": zeros_member("|u1", (4096, 4096)) for n in NAMES}
    ),
    "npz: valid + a 64 MiB extra member": lambda: zip_bytes(
        {**eye_npz_members(), "x.npy": zeros_member("|u1", (8192, 8192))}
    ),
    "npz: a 64 MiB bzip2 member": lambda: zip_archive(
        [
            *((name, raw, zipfile.ZIP_DEFLATED) for name, raw in eye_npz_members().items() if name != "w_q.npy"),
            ("w_q.npy", zeros_member("|u1", (8192, 8192)), zipfile.ZIP_BZIP2),
        ]
    ),
    "npz: header declares 30000^2 float64": lambda: zip_bytes(
        {**eye_npz_members(), "w_q.npy": npy_header("<f8", (30000, 30000)) + bytes(4096)}
    ),
    "npz: a member declaring 4 GiB": lambda: with_file_size(zip_bytes(eye_npz_members()), "w_q.npy", 2**32 - 1),
    "npz: as many members as the cap allows": lambda: zip_bytes(
        {**eye_npz_members(), **{f"{i}": b"" for i in range(MAX_MEMBERS - 4)}}
    ),
    "safetensors: offsets and shape of 10^5 x 10^5": lambda: safetensors_raw(
        json.dumps(
            {n: {"dtype": "F64", "shape": [10**5, 10**5], "data_offsets": [0, 8 * 10**10]} for n in NAMES}
        ).encode()
    ),
    "safetensors: header of 2 MB nested lists": lambda: safetensors_raw(b"[" * (MAX_UPLOAD_BYTES - 64)),
    "json: 2 MB of nesting": lambda: b"[" * (MAX_UPLOAD_BYTES - 64),
    "json: nesting as deep as the token budget allows": lambda: b"[" * JSON_TOKENS,
    "json: as many empty lists as the token budget allows": lambda: b"[" + b"[]," * (JSON_TOKENS // 2 - 1) + b"[]]",
    "json: 400 integers of 4299 digits": lambda: json.dumps({n: [[int("9" * 4299)] * 10] * 10 for n in NAMES}).encode(),
    "json: the largest valid matrices": lambda: json.dumps(
        {n: [[0.1 + i for i in range(64)]] * 64 for n in NAMES}
    ).encode(),
}


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_crafted_bombs_stay_within_a_small_memory_bound(bomb):
    """Peak Python-tracked allocation (numpy arrays included) while loading, whatever the file declares."""
    data = BOMBS[bomb]()
    assert len(data) <= MAX_UPLOAD_BYTES
    name = "w.json" if bomb.startswith("json") else "w.npz" if bomb.startswith("npz") else "w.safetensors"
    tracemalloc.start()
    try:
        outcome(name, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BOUND, f"{bomb}: {peak / 2**20:.1f} MiB"
