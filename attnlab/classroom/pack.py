"""The offline pack's data: every stage matrix of a state by a stable name, as one .npz and as CSV files in a zip.

Names: `x`, `q`, `k`, `v` (T, d_model); per head h = 1..H `scores_h<h>`, `scaled_h<h>`,
`masked_h<h>`, `weights_h<h>` (T, T) and `z_h<h>` (T, d_k); `concat`, `output` (T, d_model);
and the projections `w_q`, `w_k`, `w_v`, `w_o` (d_model, d_model; W_K and W_V (d_model, H_kv·d_k) when
query heads share key/value heads), so that every number can be recomputed from X. Modern settings add what they
put between the stages: with RoPE the rotated `q_rot_h<h>` (T, d_k) and `k_rot_kv<j>` per key/value head, with
ALiBi the bias `alibi_h<h>` (T, T), and for a rule beyond causal `mask_allowed` (T, T: 1 = may attend).
Blocked cells of `masked_h<h>` are -inf in both formats.
"""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass

import numpy as np

from attnlab.pipeline import LabResult
from attnlab.stages import STEPS, column_labels, dim_names


@dataclass(frozen=True)
class Matrix:
    """A named matrix with the labels of its rows and columns."""

    values: np.ndarray  # (rows, cols) float64
    rows: list[str]
    cols: list[str]


def stage_matrices(result: LabResult) -> dict[str, Matrix]:
    """Every stage (per-head stages split as `<name>_h1`..) and the four projections, in step order."""
    out: dict[str, Matrix] = {}
    tokens = list(result.tokens)
    for stage in STEPS:
        tensor, cols = stage.matrix(result).numpy(), column_labels(stage, result)
        if stage.per_head:
            out.update({f"{stage.name}_h{h + 1}": Matrix(m, tokens, cols) for h, m in enumerate(tensor)})
        else:
            out[stage.name] = Matrix(tensor, tokens, cols)
    dims = dim_names(result.weights.d_model)
    out.update({name: Matrix(w.numpy(), dims, dim_names(w.size(1))) for name, w in result.weights.as_dict().items()})
    out.update(modern_matrices(result))
    return out


def modern_matrices(result: LabResult) -> dict[str, Matrix]:
    """RoPE's rotated queries and keys, ALiBi's bias and a rule's mask, for the runs that have them."""
    steps, tokens, out = result.steps, list(result.tokens), {}
    if steps.rope is not None:
        cols = dim_names(steps.d_k)
        out.update({f"q_rot_h{h + 1}": Matrix(m.numpy(), tokens, cols) for h, m in enumerate(steps.heads.q)})
        out.update({f"k_rot_kv{j + 1}": Matrix(m.numpy(), tokens, cols) for j, m in enumerate(steps.k_shared)})
    if steps.alibi is not None:
        out.update({f"alibi_h{h + 1}": Matrix(m.numpy(), tokens, tokens) for h, m in enumerate(steps.alibi)})
    if result.rule is not None and result.rule.kind not in ("full", "causal"):
        out["mask_allowed"] = Matrix(result.rule.mask.to(float).numpy(), tokens, tokens)
    return out


def npz_bytes(result: LabResult) -> bytes:
    """All matrices in one .npz (plus `tokens` as a unicode array), loadable with allow_pickle=False."""
    arrays = {name: m.values for name, m in stage_matrices(result).items()}
    arrays["tokens"] = np.array(result.tokens, dtype=str)  # fixed-width unicode, not objects: no pickle needed
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def csv_text(m: Matrix) -> str:
    """One matrix as CSV: a header of column labels, each row led by its token; floats written exactly (repr)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["", *m.cols])
    for label, row in zip(m.rows, m.values, strict=True):
        writer.writerow([label, *(repr(float(v)) for v in row)])
    return buffer.getvalue()


def csv_zip_bytes(result: LabResult) -> bytes:
    """A zip of `<name>.csv`, one per matrix, each UTF-8 with a byte-order mark.

    Excel opens a CSV in the system's legacy code page (GBK, cp1252, ...) unless the file starts
    with a UTF-8 BOM; with it, Chinese tokens and `−∞` labels show as typed.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, m in stage_matrices(result).items():
            archive.writestr(f"{name}.csv", csv_text(m).encode("utf-8-sig"))
    return buffer.getvalue()
