"""Contract 13's masks against FlexAttention's create_mask, with the rules written as attention-gym publishes them.

The mask_mods here are attention-gym's own (attn_gym/masks: causal, sliding_window, prefix_lm, document_mask),
written out in the test and composed with FlexAttention's and_masks/or_masks, never attnlab's `mask_mod`. Two
conventions differ and are translated here: attention-gym's `window_size` counts the keys before the query
(`q_idx - kv_idx <= window_size`), ours counts the query too (window = window_size + 1); its documents are given
by offsets, ours by one id per position.
"""

from __future__ import annotations

import pytest
import torch
from torch.nn.attention.flex_attention import and_masks, create_mask, or_masks

from attnlab import masks
from tests.conftest import REFERENCE_GROUP

pytestmark = REFERENCE_GROUP  # FlexAttention's first create_mask warms torch.func up (seconds): one worker pays it
SIZES = [(1, 1), (5, 5), (7, 7), (4, 9), (9, 4)]  # (T_q, T_k): square, and both kinds of rectangle


def gym_causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def gym_sliding_window(window_size: int):
    def sliding_window(b, h, q_idx, kv_idx):
        return q_idx - kv_idx <= window_size

    return and_masks(sliding_window, gym_causal)


def gym_prefix_lm(prefix_length: int):
    def prefix_mask(b, h, q_idx, kv_idx):
        return kv_idx < prefix_length

    return or_masks(prefix_mask, gym_causal)


def gym_sinks(window_size: int, n_sinks: int):
    """StreamingLLM: the sliding window, or one of the first n_sinks keys, never a later key."""

    def sink(b, h, q_idx, kv_idx):
        return kv_idx < n_sinks

    def window(b, h, q_idx, kv_idx):
        return q_idx - kv_idx <= window_size

    return and_masks(or_masks(window, sink), gym_causal)


def gym_documents(lengths: list[int]):
    """attention-gym's generate_doc_mask_mod(causal_mask, offsets): causal inside a document, nothing across."""
    offsets = torch.cumsum(torch.tensor([0, *lengths]), dim=0)
    document_id = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))

    def doc_mask_mod(b, h, q_idx, kv_idx):
        same_doc = document_id[q_idx] == document_id[kv_idx]
        q_logical = q_idx - offsets[document_id[q_idx]]
        kv_logical = kv_idx - offsets[document_id[kv_idx]]
        return same_doc & gym_causal(b, h, q_logical, kv_logical)

    return doc_mask_mod


def reference(mod, t_q: int, t_k: int) -> torch.Tensor:
    """FlexAttention's dense mask for a mask_mod, (T_q, T_k)."""
    return create_mask(mod, None, None, t_q, t_k, device="cpu")[0, 0]


@pytest.mark.parametrize("t_q, t_k", SIZES)
def test_full_and_causal_equal_create_mask(t_q, t_k):
    assert torch.equal(masks.build("causal", t_q, t_k), reference(gym_causal, t_q, t_k))
    assert masks.build("full", t_q, t_k).all() and masks.build("full", t_q, t_k).shape == (t_q, t_k)
    assert torch.equal(masks.build("causal", t_q, t_k), torch.ones(t_q, t_k, dtype=torch.bool).tril())  # is_causal


@pytest.mark.parametrize("t_q, t_k", SIZES)
@pytest.mark.parametrize("window", [1, 2, 3, 20])
def test_window_equals_attention_gyms_sliding_window(t_q, t_k, window):
    ours = masks.build("window", t_q, t_k, window=window)
    assert torch.equal(ours, reference(gym_sliding_window(window - 1), t_q, t_k))
    seen = [len(range(max(0, i - window + 1), min(i, t_k - 1) + 1)) for i in range(t_q)]  # keys i-window < j <= i
    assert ours.sum(dim=-1).tolist() == seen


@pytest.mark.parametrize("t_q, t_k", SIZES)
@pytest.mark.parametrize("window, sinks", [(1, 1), (2, 1), (2, 3), (3, 0), (1, 9)])
def test_sinks_equal_a_window_or_the_first_keys(t_q, t_k, window, sinks):
    ours = masks.build("sinks", t_q, t_k, window=window, sinks=sinks)
    assert torch.equal(ours, reference(gym_sinks(window - 1, sinks), t_q, t_k))


@pytest.mark.parametrize("t_q, t_k", SIZES)
@pytest.mark.parametrize("prefix", [0, 1, 3, 12])
def test_prefix_equals_attention_gyms_prefix_lm(t_q, t_k, prefix):
    assert torch.equal(masks.build("prefix", t_q, t_k, prefix=prefix), reference(gym_prefix_lm(prefix), t_q, t_k))


@pytest.mark.parametrize("lengths", [[5], [2, 3], [1, 1, 1, 1], [3, 1, 4, 1]])
def test_documents_equal_attention_gyms_document_mask(lengths):
    t = sum(lengths)
    ids = [d for d, n in enumerate(lengths) for _ in range(n)]
    ours = masks.build("documents", t, documents=ids)
    assert torch.equal(ours, reference(gym_documents(lengths), t, t))
    skipped = [2 * d for d in ids]  # ids need not be consecutive, only non-decreasing
    assert torch.equal(masks.build("documents", t, documents=skipped), ours)


def test_our_mask_mod_gives_the_same_masks_as_build():
    """The benchmark's block masks come from `mask_mod`: it must say what `build` says."""
    cases = [
        ("causal", {}),
        ("window", {"window": 2}),
        ("sinks", {"window": 2, "sinks": 1}),
        ("prefix", {"prefix": 3}),
        ("documents", {"documents": [0, 0, 1, 1, 1, 2]}),
    ]
    for kind, kw in cases:
        assert torch.equal(reference(masks.mask_mod(kind, **kw), 6, 6), masks.build(kind, 6, **kw)), kind


def test_eos_ends_a_document():
    tokens = "<BOS> I like you <EOS> <BOS> you like me <EOS>".split()
    assert masks.documents_from_tokens(tokens) == [0] * 5 + [1] * 5
    assert masks.documents_from_tokens("a b <EOS> c".split()) == [0, 0, 0, 1]
    assert masks.documents_from_tokens("a b c".split()) == [0, 0, 0]
    assert masks.allowed_pairs(masks.build("documents", 10, documents=[0] * 5 + [1] * 5)) == 2 * 15


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda: masks.build("diagonal", 4), "kind"),
        (lambda: masks.build("window", 4), "window"),
        (lambda: masks.build("window", 4, window=0), "window"),
        (lambda: masks.build("sinks", 4, window=-1, sinks=1), "window"),
        (lambda: masks.build("sinks", 4, window=2, sinks=-1), "sinks"),
        (lambda: masks.build("prefix", 4, prefix=-2), "prefix"),
        (lambda: masks.build("documents", 4), "documents"),
        (lambda: masks.build("documents", 4, documents=[0, 0, 1]), "documents"),
        (lambda: masks.build("documents", 4, documents=[0, 1, 0, 1]), "documents"),
        (lambda: masks.build("causal", -1), "t_q"),
        (lambda: masks.mask_mod("window", window=0), "window"),
    ],
)
def test_a_bad_argument_is_a_value_error_naming_it(call, named):
    with pytest.raises(ValueError, match=named):
        call()
