"""The Benchmark page's URL parameters: the live sweep's settings (which recorded file to show stays the page's own)."""

from __future__ import annotations

from attnlab.params import Param, bool_param, choice_param, int_param, list_param, open_param

BENCH_IMPLS = ["explicit", "tiled", "sdpa", "sdpa-math", "sdpa-flash"]  # the Benchmark page's first sweep
BENCH_SEQ = [64, 128, 256, 512]
BENCH_SEQ_OPTIONS: tuple[int, ...] = tuple(2**i for i in range(4, 15))  # 16 .. 16384
BENCH_MASKS = ("full", "causal", "window", "documents")  # the Benchmark's mask rules (contract 15)
BENCH_DOCS = (2, 4, 8, 16)  # packed documents: each divides every length the page offers
BENCH_FOLDS = ("grid", "studies")  # a recorded file's charts and table, and its studies: folded until opened


def _bench() -> tuple[Param, ...]:  # the sweep's settings (which recorded file to show stays the page's own)
    from attnlab.bench import DTYPES, IMPLS

    return (
        choice_param("dtype", "float32", tuple(DTYPES)),
        int_param("heads", 4, 1, 64),
        int_param("head_dim", 64, 1, 256),
        int_param("batch", 1, 1, 16),
        bool_param("causal", False),  # older links: causal=true means mask=causal
        list_param("impls", BENCH_IMPLS, IMPLS),
        list_param("seq", BENCH_SEQ, BENCH_SEQ_OPTIONS),
        choice_param("mask", "full", BENCH_MASKS),
        int_param("window", 128, 1, BENCH_SEQ_OPTIONS[-1]),
        choice_param("docs", 4, BENCH_DOCS),
        list_param("kv_heads", [4], tuple(range(1, 65))),  # each a divisor of heads; the page's default is [heads]
        open_param(BENCH_FOLDS),
    )


BENCH_SCOPES = {"bench": _bench}
