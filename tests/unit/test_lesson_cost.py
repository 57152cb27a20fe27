"""The cost lesson's math: live timing of the explicit path, log-log slopes, recorded results, RNN vs attention."""

from __future__ import annotations

import pytest
import torch

from attnlab.lessons import cost
from attnlab.limits import MAX_COST_T, MIN_COST_T
from tests.near import assert_near


def test_seq_lens_and_slope_fit():
    assert cost.seq_lens(64, 1000) == [64, 128, 256, 512, 1000]
    assert cost.seq_lens(1, 99999)[0] == MIN_COST_T and cost.seq_lens(1, 99999)[-1] == MAX_COST_T
    t = [64, 128, 256, 512]
    assert cost.loglog_slope(t, [3 * x**2 for x in t]) == pytest.approx(2.0)
    assert cost.loglog_slope(t, [5 * x for x in t]) == pytest.approx(1.0)
    assert cost.loglog_slope([64], [1.0]) is None


def test_live_measurement_counts_memory_that_grows_like_t_squared():
    run = cost.measure_live(cost.seq_lens(32, 256), head_dim=16, budget_s=0.5)
    assert [p.seq_len for p in run.points] == [32, 64, 128, 256]
    assert all(p.median_ms > 0 and p.reps >= 1 for p in run.points)
    p = run.points[-1]
    assert p.bytes == 3 * 256 * 256 * 4 + 256 * 16 * 4  # three T x T float32 matrices and the output
    slope = cost.loglog_slope([p.seq_len for p in run.points], [p.bytes for p in run.points])
    assert 1.8 < slope <= 2.0


class FakeClock:
    """perf_counter that advances only when the explicit path runs: T^2 microseconds a call."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def attention(self, q, k, v):
        self.now += q.size(0) ** 2 * 1e-6
        return torch.zeros(1), 0


def test_the_time_budget_shares_itself_out_and_skips_what_does_not_fit(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(cost.time, "perf_counter", clock)
    monkeypatch.setattr(cost, "explicit_attention", clock.attention)
    run = cost.measure_live([64, 128, 256], head_dim=8, budget_s=1.0, max_reps=7)
    assert [p.reps for p in run.points] == [7, 7, 7]  # every size fits its share: all repetitions
    assert [p.median_ms for p in run.points] == pytest.approx([4.096, 16.384, 65.536])
    clock.now = 0.0
    run = cost.measure_live([256, 1024, 2048, 4096], head_dim=8, budget_s=1.0, max_reps=7)
    # T=1024 costs 1.05 s a call: its warm-up and one timed call take the run past 1.5 x the budget
    assert [p.seq_len for p in run.points] == [256, 1024] and run.skipped == [2048, 4096]
    assert [p.reps for p in run.points] == [3, 1]  # 256: warm-up + 3 calls pass its 0.25 s share
    assert all(p.reps >= 1 for p in run.points)  # a size that is measured gets at least one timed call
    assert run.seconds == pytest.approx(clock.now)


def test_explicit_path_matches_sdpa():
    q, k, v = (torch.randn(32, 8) for _ in range(3))
    out, _ = cost.explicit_attention(q, k, v)
    assert_near(out, torch.nn.functional.scaled_dot_product_attention(q, k, v))


def test_recorded_series_from_a_bench_file(tmp_path):
    import json

    rows = []
    for impl, power in (("explicit", 2), ("sdpa-flash", 1)):
        for t in (256, 512, 1024):
            rows.append(
                dict(
                    impl=impl,
                    device="cuda",
                    dtype="float16",
                    batch=1,
                    heads=8,
                    seq_len=t,
                    head_dim=64,
                    causal=False,
                    median_ms=1e-5 * t**2,
                    p20_ms=1e-5 * t**2,
                    p80_ms=1e-5 * t**2,
                    tflops=1.0,
                    peak_mem_bytes=float(t**power),
                    max_abs_err=0.0,
                    status="ok",
                )
            )
    doc = {"env": {"torch": "2.x", "device_name": "Test GPU", "date": "2025-01-01"}, "results": rows}
    (tmp_path / "run.json").write_text(json.dumps(doc))
    series, skipped = cost.recorded_series(tmp_path)
    assert not skipped
    by_impl = {s.impl: s for s in series}
    assert by_impl["explicit"].mem_slope == pytest.approx(2.0) and by_impl["sdpa-flash"].mem_slope == pytest.approx(1.0)
    assert by_impl["explicit"].time_slope == pytest.approx(2.0)
    assert "Test GPU" in by_impl["explicit"].label
    assert cost.recorded_series(tmp_path / "missing") == ([], [])


def test_rnn_vs_attention_counts():
    r = cost.rnn_vs_attention(100, d=64)
    assert (r.rnn_steps, r.attn_steps, r.rnn_path, r.attn_path) == (100, 1, 99, 1)
    assert r.attn_flops == 4 * 100 * 100 * 64 and r.rnn_flops == 2 * 100 * 64 * 64
