"""The tiled (online-softmax) attention equals the explicit path and SDPA on any shapes, blocks and masks."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.attention import attention_steps
from attnlab.tiled import tiled_attention, tiled_trace
from tests.examples import examples
from tests.near import assert_near


def _inputs(seed: int, lead: tuple[int, ...], t_q: int, t_k: int, d: int, d_v: int, dtype: torch.dtype):
    """Seeded q, k, v with SDPA's layout (..., T, d)."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(*lead, t_q, d, generator=gen, dtype=torch.float64).to(dtype)
    k = torch.randn(*lead, t_k, d, generator=gen, dtype=torch.float64).to(dtype)
    v = torch.randn(*lead, t_k, d_v, generator=gen, dtype=torch.float64).to(dtype)
    return q, k, v


@st.composite
def cases(draw):
    """A random attention problem: shapes, block sizes, mask kind, causal flag, dtype."""
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    t_q, t_k = draw(st.integers(1, 24)), draw(st.integers(1, 24))
    d, d_v = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    seed = draw(st.integers(0, 2**16))
    q, k, v = _inputs(seed, lead, t_q, t_k, d, d_v, dtype)
    kind = draw(st.sampled_from(["none", "bool", "float", "bool-row"]))
    gen = torch.Generator().manual_seed(seed + 1)
    mask = None
    if kind == "bool":  # random mask; some rows may be fully blocked
        mask = torch.rand(t_q, t_k, generator=gen) > draw(st.floats(0.0, 0.9))
        if draw(st.booleans()):
            mask[draw(st.integers(0, t_q - 1))] = False  # a query that sees no key at all
    elif kind == "float":
        mask = torch.randn(t_q, t_k, generator=gen, dtype=dtype)
        mask = mask.masked_fill(torch.rand(t_q, t_k, generator=gen) > 0.8, float("-inf"))
    elif kind == "bool-row":  # broadcast key-padding style mask, shape (1, T_k)
        mask = torch.rand(1, t_k, generator=gen) > 0.3
    causal = draw(st.booleans()) and mask is None  # SDPA refuses attn_mask together with is_causal
    scale = draw(st.sampled_from([None, 0.5, 1.7]))
    blocks = draw(st.integers(1, 30)), draw(st.integers(1, 30))
    return q, k, v, mask, causal, scale, blocks


@settings(max_examples=examples(150), deadline=None)
@given(cases())
def test_tiled_matches_explicit_and_sdpa(case):
    q, k, v, mask, causal, scale, (block_q, block_k) = case
    got = tiled_attention(q, k, v, mask, causal, scale, block_q=block_q, block_k=block_k)
    explicit = attention_steps(q, k, v, attn_mask=mask, is_causal=causal, scale=scale).output
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale)
    assert got.shape == explicit.shape and got.dtype == q.dtype
    assert_near(got, explicit)
    assert_near(got, sdpa)


@settings(max_examples=examples(40), deadline=None)
@given(cases())
def test_trace_final_output_equals_full_softmax(case):
    q, k, v, mask, causal, scale, (block_q, block_k) = case
    trace = tiled_trace(q, k, v, mask, causal, scale, block_q=block_q, block_k=block_k)
    full = attention_steps(q, k, v, attn_mask=mask, is_causal=causal, scale=scale)
    assert_near(trace.output, full.output)
    n_q, n_k = -(-q.size(-2) // block_q), -(-k.size(-2) // block_k)
    assert len(trace.steps) == n_q * n_k  # one step per tile, skipped ones included


def test_causal_with_fewer_queries_than_keys_is_top_left_aligned():
    q, k, v = _inputs(3, (2,), 5, 11, 4, 4, torch.float64)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert_near(tiled_attention(q, k, v, is_causal=True, block_q=2, block_k=3), want)


def test_fully_masked_rows_give_zero_not_nan():
    q, k, v = _inputs(0, (1, 2), 6, 7, 3, 3, torch.float32)
    mask = torch.ones(6, 7, dtype=torch.bool)
    mask[2] = False
    out = tiled_attention(q, k, v, attn_mask=mask, block_q=4, block_k=2)
    assert torch.isfinite(out).all()
    assert (out[..., 2, :] == 0).all()


def test_trace_walks_a_small_causal_example_step_by_step():
    q, k, v = _inputs(1, (), 4, 4, 3, 2, torch.float64)
    trace = tiled_trace(q, k, v, is_causal=True, block_q=2, block_k=2)
    order = [(s.q_block, s.k_block, s.skipped) for s in trace.steps]
    assert order == [(0, 0, False), (0, 1, True), (1, 0, False), (1, 1, False)]
    first = trace.steps[0]
    assert first.q_rows == (0, 2) and first.k_cols == (0, 2)
    assert first.scores.shape == (2, 2) and first.m.shape == (2, 1) and first.acc.shape == (2, 2)
    assert torch.isneginf(first.scores[0, 1])  # query 0 may not see key 1
    # after its first key block, query block 0 is already final: m is the row max, out = acc / l
    full = attention_steps(q, k, v, is_causal=True)
    assert_near(first.m, full.masked[:2].amax(-1, keepdim=True))
    assert_near(first.out, first.acc / first.l)
    assert_near(trace.steps[-1].out, full.output[2:])
    # the skipped tile changes nothing
    assert_near(trace.steps[1].l, trace.steps[0].l)


def test_running_max_only_grows_and_sum_rescales():
    q, k, v = _inputs(5, (), 3, 9, 4, 4, torch.float64)
    trace = tiled_trace(q, k, v, block_q=3, block_k=3)
    ms = [s.m for s in trace.steps]
    assert all((b >= a).all() for a, b in zip(ms, ms[1:], strict=False))
    full = attention_steps(q, k, v)
    exp_sum = torch.exp(full.masked - trace.steps[-1].m).sum(-1, keepdim=True)
    assert_near(trace.steps[-1].l, exp_sum)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_accumulates_in_float32(dtype):
    q, k, v = _inputs(2, (2,), 40, 40, 16, 16, torch.float64)
    got = tiled_attention(q.to(dtype), k.to(dtype), v.to(dtype), is_causal=True, block_q=8, block_k=16)
    ref = attention_steps(q.to(dtype).double(), k.to(dtype).double(), v.to(dtype).double(), is_causal=True)
    assert got.dtype == dtype
    # outputs average N(0, 1) values, of size 1 to 3: a few half-precision ulps (bfloat16 7.8e-3, float16 9.8e-4)
    assert_near(got.double(), ref.output, (1e-2, 0.0) if dtype == torch.bfloat16 else (2e-3, 0.0))


def test_bad_block_sizes_are_refused():
    q, k, v = _inputs(0, (), 2, 2, 2, 2, torch.float32)
    with pytest.raises(ValueError, match="block sizes"):
        tiled_attention(q, k, v, block_q=0)


def test_memory_grows_with_t_not_t_squared():
    """Profile the CPU allocator: the tiled path's peak stays far below one T x T matrix."""
    from torch.profiler import ProfilerActivity, profile

    t, d = 1024, 16
    q, k, v = _inputs(0, (1, 1), t, t, d, d, torch.float32)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        tiled_attention(q, k, v, block_q=64, block_k=64)
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events() if e.name() == "[memory]")
    live = peak = 0
    for _, n in events:
        live += n
        peak = max(peak, live)
    assert 0 < peak < t * t * 4 / 8


def test_step_stats_follow_the_running_max_and_sum_of_each_block():
    from attnlab.tiled import step_stats

    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(5, 3, generator=gen, dtype=torch.float64) for _ in range(3))
    trace = tiled_trace(q, k, v, block_q=2, block_k=2)
    scores = (q @ k.T) * trace.scale
    for s, step in enumerate(trace.steps, start=1):
        (r0, r1), (_, c1) = step.q_rows, step.k_cols
        m = scores[r0:r1, :c1].amax(1)  # every key seen so far by this query block
        sums = torch.exp(scores[r0:r1, :c1] - m[:, None]).sum(1)
        for stats, m_i, l_i in zip(step_stats(trace, s), m.tolist(), sums.tolist(), strict=True):
            assert stats.m_after == pytest.approx(m_i) and stats.l_after == pytest.approx(l_i)
            if step.k_block == 0:
                assert stats.alpha is None and stats.l_before == 0.0  # the first tile of a block starts from nothing
            else:
                assert stats.alpha == pytest.approx(torch.exp(torch.tensor(stats.m_before - stats.m_after)).item())


def test_the_output_assembled_so_far_ends_as_the_full_output():
    from attnlab.tiled import assembled

    gen = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(5, 3, generator=gen, dtype=torch.float64) for _ in range(3))
    trace = tiled_trace(q, k, v, block_q=2, block_k=3)
    first = assembled(trace, 1)
    assert torch.isnan(first[2:]).all() and not torch.isnan(first[:2]).any()
    assert_near(assembled(trace, len(trace.steps)), trace.output)
