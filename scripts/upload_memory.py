"""How much memory hostile weights files make `load_weights` allocate: RSS growth and tracemalloc peak per file.

Each file is loaded in a fresh subprocess (one for RSS, one for tracemalloc, which adds its own
overhead), so one file's garbage cannot hide another's. RSS growth is the peak resident set during
the call (VmHWM, reset just before it through /proc/self/clear_refs) minus the resident set before.

    python scripts/upload_memory.py                               # the loader in this checkout
    git show 3087329:attnlab/weights_io.py > /tmp/weights_io_before.py
    python scripts/upload_memory.py --loader /tmp/weights_io_before.py   # the loader before issue 11

A child gets an address-space limit of its size after imports plus --limit-gib, so a bomb that the
loader under test does not stop ends as a MemoryError instead of taking the machine down.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import resource
import struct
import subprocess
import sys
import time
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("w_q", "w_k", "w_v", "w_o")
CHUNK = 2**20
MIB = 2**20


def npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    """The header numpy writes before an array of this dtype and shape."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": descr, "fortran_order": False, "shape": shape})
    return out.getvalue()


def write_zeros_member(
    zf: zipfile.ZipFile, name: str, descr: str, shape: tuple[int, ...], method: int = zipfile.ZIP_DEFLATED
) -> None:
    """A .npy member of zeros written in chunks, so building a bomb never holds its decompressed size."""
    info = zipfile.ZipInfo(name)
    info.compress_type = method
    nbytes = int(np.prod(shape)) * np.dtype(descr).itemsize
    with zf.open(info, "w", force_zip64=True) as member:
        member.write(npy_header(descr, shape))
        zero = bytes(CHUNK)
        for start in range(0, nbytes, CHUNK):
            member.write(zero[: min(CHUNK, nbytes - start)])


def npz(members: Callable[[zipfile.ZipFile], None]) -> bytes:
    """An archive whose members `members` writes (level 9, as small as deflate gets)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        members(zf)
    return buf.getvalue()


def small_matrices(zf: zipfile.ZipFile, skip: tuple[str, ...] = ()) -> None:
    """Four valid 8 x 8 members (minus `skip`)."""
    for name in NAMES:
        if name not in skip:
            out = io.BytesIO()
            np.save(out, np.eye(8))
            zf.writestr(f"{name}.npy", out.getvalue())


def npz_lying_header(zf: zipfile.ZipFile) -> None:
    """w_q's .npy header declares 30000 x 30000 float64 (7.2 GB) over 4 KB of data."""
    zf.writestr("w_q.npy", npy_header("<f8", (30000, 30000)) + bytes(4096))
    small_matrices(zf, skip=("w_q",))


def npz_many_members(zf: zipfile.ZipFile) -> None:
    """The four matrices plus empty members until the archive is just under the upload cap."""
    small_matrices(zf)
    for i in range(19000):
        zf.writestr(f"{i}", b"")


def safetensors(header: object, body: bytes = b"", length: int | None = None) -> bytes:
    """A safetensors file from a header object (or raw header text) and body; `length` can lie."""
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(head) if length is None else length) + head + body


def valid_safetensors(d: int, pad_to: int | None = None) -> bytes:
    """Four d x d float32 tensors; the header is space-padded to `pad_to` bytes when given."""
    raw = np.eye(d, dtype="<f4").tobytes()
    header = {
        n: {"dtype": "F32", "shape": [d, d], "data_offsets": [i * len(raw), (i + 1) * len(raw)]}
        for i, n in enumerate(NAMES)
    }
    head = json.dumps(header).encode()
    head = head.ljust(pad_to) if pad_to else head
    return safetensors(head, raw * 4)


def json_doc(cells: str) -> bytes:
    """A JSON weights file whose four matrices are all `cells` (raw JSON text)."""
    return ("{" + ", ".join(f'"{n}": {cells}' for n in NAMES) + "}").encode()


def hostile_files() -> dict[str, tuple[str, bytes]]:
    """Label -> (file name, bytes): the bombs, the liars and the deep or huge JSON, plus valid files to compare."""
    cap = 2 * MIB - 4096
    identity64 = json.dumps({n: np.eye(64).tolist() for n in NAMES}).encode()
    return {
        "valid json d=64": ("w.json", identity64),
        "valid npz d=64": (
            "w.npz",
            npz(lambda zf: [zf.writestr(f"{n}.npy", npy_header("<f8", (64, 64)) + bytes(32768)) for n in NAMES]),
        ),
        "valid safetensors, header 0x280 bytes (starts 80 02)": ("w.safetensors", valid_safetensors(8, pad_to=0x280)),
        "npz bomb: 4 x 8192^2 uint8 zeros": (
            "w.npz",
            npz(lambda zf: [write_zeros_member(zf, f"{n}.npy", "|u1", (8192, 8192)) for n in NAMES]),
        ),
        "npz + extra 1 GiB member": (
            "w.npz",
            npz(lambda zf: (small_matrices(zf), write_zeros_member(zf, "extra.npy", "|u1", (32768, 32768)))),
        ),
        "npz bzip2 member 8192^2 uint8": (
            "w.npz",
            npz(
                lambda zf: (
                    small_matrices(zf, skip=("w_q",)),
                    write_zeros_member(zf, "w_q.npy", "|u1", (8192, 8192), zipfile.ZIP_BZIP2),
                )
            ),
        ),
        "npz header says 30000^2 f8": ("w.npz", npz(npz_lying_header)),
        "npz 19000 empty members": ("w.npz", npz(npz_many_members)),
        "safetensors length 2^63": ("w.safetensors", safetensors({}, length=2**63)),
        "safetensors offsets past body": (
            "w.safetensors",
            safetensors({n: {"dtype": "F64", "shape": [64, 64], "data_offsets": [0, 32768]} for n in NAMES}),
        ),
        "safetensors shape 10^5 x 10^5": (
            "w.safetensors",
            safetensors({n: {"dtype": "F64", "shape": [10**5, 10**5], "data_offsets": [0, 8 * 10**10]} for n in NAMES}),
        ),
        "safetensors header: 2 MB nested": ("w.safetensors", safetensors(b"[" * cap)),
        "safetensors header: 2 MB of {}": (
            "w.safetensors",
            safetensors(("{" + ",".join(f'"{i}":{{}}' for i in range(cap // 12)) + "}").encode()),
        ),
        "json: 2 MB of [": ("w.json", b"[" * cap),
        "json: 30000 nested [": ("w.json", b"[" * 30000),
        "json: 2 MB of [[],[],...]": ("w.json", b'{"w_q": [' + b",".join([b"[]"] * (cap // 3)) + b"]}"),
        "json: 2 MB of 0.0 cells": ("w.json", b'{"w_q": [[' + b",".join([b"0.0"] * (cap // 4)) + b"]]}"),
        "json: 4299-digit integers": ("w.json", json_doc(json.dumps([[int("9" * 4299)] * 10] * 10))),
        "json: 5000-digit integer": ("w.json", json_doc("[[" + "9" * 5000 + "]]")),
        "json: 1e999 and NaN": ("w.json", json_doc("[[1e999, NaN], [0, 0]]")),
    }


def load_module(path: str):
    """The loader under test, imported from a file path (another revision's works too)."""
    spec = importlib.util.spec_from_file_location("weights_io_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def status_kib(field: str) -> int:
    """One line of /proc/self/status, in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def child(loader: str, name: str, path: str, mode: str, limit_gib: float) -> None:
    """Load one file once and print what happened and what it cost, as one JSON line."""
    module = load_module(loader)
    data = Path(path).read_bytes()
    limit = status_kib("VmSize") * 1024 + int(limit_gib * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if mode == "tracemalloc":
        tracemalloc.start()
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    before, cpu = status_kib("VmRSS"), time.process_time()
    try:
        module.load_weights(name, data)
        outcome = "accepted"
    except module.WeightsError as err:
        outcome = f"refused: {err.reason}"
    except BaseException as err:  # noqa: B036 - whatever escapes is what this script reports
        outcome = f"ESCAPED {type(err).__name__}"
    result = {"outcome": outcome, "cpu_s": time.process_time() - cpu}
    if mode == "tracemalloc":
        result["peak_mib"] = tracemalloc.get_traced_memory()[1] / MIB
    else:
        result["rss_mib"] = (status_kib("VmHWM") - before) / 1024
    print(json.dumps(result))


def measure(loader: str, name: str, path: Path, mode: str, limit_gib: float) -> dict:
    """One fresh interpreter loading one file."""
    cmd = [sys.executable, __file__, "--child", loader, name, str(path), mode, str(limit_gib)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"outcome": f"child died: {done.stderr.strip()[-120:]}"}


def main() -> None:
    """Build every hostile file, load each in fresh subprocesses, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loader", default=str(ROOT / "attnlab" / "weights_io" / "__init__.py"))
    parser.add_argument("--out", default="/tmp/attnlab-upload-memory", help="where the hostile files are written")
    parser.add_argument("--limit-gib", type=float, default=6.0, help="address space a child may add")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        loader, name, path, mode, limit = args.child
        child(loader, name, path, mode, float(limit))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"loader: {args.loader}\n")
    print("| file | size | outcome | RSS growth (MiB) | tracemalloc peak (MiB) | CPU (s) |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    for i, (label, (name, data)) in enumerate(hostile_files().items()):
        path = out / f"{i:02d}-{name}"
        path.write_bytes(data)
        rss = measure(args.loader, name, path, "rss", args.limit_gib)
        peak = measure(args.loader, name, path, "tracemalloc", args.limit_gib)
        print(
            f"| {label} | {len(data) / 1024:,.0f} KiB | {rss['outcome']} | {rss.get('rss_mib', float('nan')):,.1f} "
            f"| {peak.get('peak_mib', float('nan')):,.1f} | {rss.get('cpu_s', float('nan')):.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
