"""Attention files with grouped heads and a stated rule (issue 51): written, read back, checked, and refused.

Keys hold H_kv heads while queries hold H; the file states which key/value head each query head reads, and per
layer the scale, the soft-cap and the sliding window its scores follow. Files written before these fields existed
still open, read as one key head per query head under the plain rule. Every hostile value is refused with its own
reason, a sentence in both languages (`reason` from test_attnfile checks that).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import save as st_save

from attnlab.attnfile import FORMAT, AttentionFile, file_bytes, load, to_bytes
from attnlab.attnfile.rule import layer_weights, visible, weights
from attnlab.figures import query_key_map
from attnlab.qkmap import agreement, qk_map, visible_keys
from attnlab.sources import check, kv_head
from tests.near import assert_near
from tests.unit.test_attnfile import meta_for, raw_file, reason

L, H, H_KV, T, D = 2, 4, 2, 6, 3


def grouped(window: tuple = (None, 3), softcap: tuple = (None, 2.0), seed: int = 0) -> AttentionFile:
    """A causal grouped file whose weights are its own queries and keys under its rule (built with torch alone)."""
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(L, H, T, D, generator=g), torch.randn(L, H_KV, T, D, generator=g)
    scale = (0.5, 0.25)
    a = []
    for layer in range(L):
        k_rep = k[layer].repeat_interleave(H // H_KV, dim=0)  # (H, T, D): query head h reads key head h // 2
        s = q[layer] @ k_rep.transpose(-1, -2) * scale[layer]
        if softcap[layer] is not None:
            s = softcap[layer] * torch.tanh(s / softcap[layer])
        i, j = torch.arange(T).unsqueeze(1), torch.arange(T).unsqueeze(0)
        seen = (j <= i) & ((i - j < window[layer]) if window[layer] is not None else True)
        a.append(s.masked_fill(~seen, float("-inf")).softmax(-1))
    tokens = tuple(f"t{i}" for i in range(T))
    return AttentionFile(torch.stack(a), tokens, tokens, "tiny", q, k, "self", True, scale, softcap, window)


def test_a_grouped_file_round_trips_with_its_grouping_and_rule():
    f = grouped()
    data = file_bytes(f)
    back = load("g.safetensors", data)
    assert back.keys.shape == (L, H_KV, T, D) and back.n_kv_heads == H_KV
    assert [back.kv_head(h) for h in range(H)] == [0, 0, 1, 1]
    assert (back.scale, back.softcap, back.window, back.causal) == ((0.5, 0.25), (None, 2.0), (None, 3), True)
    meta = json.loads(data[8 : 8 + int.from_bytes(data[:8], "little")])["__metadata__"]
    assert json.loads(meta["kv_head_of"]) == [0, 0, 1, 1] and meta["format"] == FORMAT  # the grouping is stated
    for layer in range(L):
        assert (layer_weights(back, layer) - f.attentions[layer]).abs().max() <= 1e-6
    check(back)
    assert kv_head(back, 3) == 1


def test_the_rule_functions_agree_with_sdpa_on_grouped_heads():
    g = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(H, T, D, generator=g), torch.randn(H_KV, T, D, generator=g), torch.randn(H_KV, T, D)
    allowed = visible(T, T, True, 3)
    w = weights(q, k, 0.7, None, allowed)
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed, scale=0.7, enable_gqa=True)
    assert_near(w @ v.repeat_interleave(H // H_KV, dim=0), out)
    assert visible_keys(T, 4, True, 3).tolist() == [2, 3, 4] and visible_keys(T, 1, True, 3).tolist() == [0, 1]


def test_files_written_before_grouped_heads_still_open():
    """The old writer's output, made here with the safetensors library: format /1, q and k with H heads, no rule."""
    a = torch.softmax(torch.randn(L, H, T, T), -1)
    q, k = torch.randn(L, H, T, D), torch.randn(L, H, T, D)
    tokens = json.dumps([f"w{i}" for i in range(T)])
    old = {"format": "attnlab-attention/1", "model": "bert", "kind": "self", "causal": "false", "tokens": tokens}
    f = load(
        "old.safetensors", st_save({"attentions": a, "queries": q, "keys": k}, metadata=old | {"tokens_k": tokens})
    )
    assert f.has_qk and f.n_kv_heads == H and (f.scale, f.softcap, f.window, f.qk_declined) == ((), (), (), "")
    assert f.rule(0) == (D**-0.5, None, None) and f.kv_head(3) == 3
    bare = load("bare.safetensors", st_save({"attentions": a}, metadata={"tokens": tokens}))
    assert bare.n_kv_heads == H and bare.rule(1) == (None, None, None)


def test_save_states_one_scale_for_every_layer_and_a_declined_reason():
    a = torch.softmax(torch.randn(L, H, T, T), -1)
    f = load("s.safetensors", to_bytes(a, [str(i) for i in range(T)], qk_declined="extra_scores"))
    assert f.qk_declined == "extra_scores" and not f.has_qk
    q = torch.randn(L, H, T, D)
    words = [str(i) for i in range(T)]
    assert load("s.safetensors", to_bytes(a, words, queries=q, keys=q.clone(), scale=0.5)).scale == (0.5, 0.5)


A = grouped().attentions.numpy()
Q, K = grouped().queries.numpy(), grouped().keys.numpy()
CAUSAL = meta_for(T, causal="true")
GROUPING = {"kv_head_of": json.dumps([0, 0, 1, 1])}
QK = {"attentions": A, "queries": Q, "keys": K}

HOSTILE = {
    "keys heads do not divide": (
        {"attentions": A, "queries": Q, "keys": np.zeros((L, 3, T, D))},
        CAUSAL | GROUPING,
        "kv_heads",
    ),
    "more key heads than query heads": (
        {"attentions": A, "queries": Q, "keys": np.zeros((L, 8, T, D))},
        CAUSAL,
        "kv_heads",
    ),
    "grouping unstated": (QK, CAUSAL, "kv_grouping"),
    "grouping interleaved": (QK, CAUSAL | {"kv_head_of": json.dumps([0, 1, 0, 1])}, "kv_grouping"),
    "grouping not json": (QK, CAUSAL | {"kv_head_of": "[0, 0,"}, "bad_json"),
    "grouping without keys": ({"attentions": A}, CAUSAL | GROUPING, "rule_without_qk"),
    "scale without queries": ({"attentions": A}, CAUSAL | {"scale": "[0.5, 0.5]"}, "rule_without_qk"),
    "scale nan": (QK, CAUSAL | GROUPING | {"scale": "[NaN, 0.5]"}, "bad_scale"),
    "scale negative": (QK, CAUSAL | GROUPING | {"scale": "[-1, 0.5]"}, "bad_scale"),
    "scale too few": (QK, CAUSAL | GROUPING | {"scale": "[0.5]"}, "bad_scale"),
    "scale null": (QK, CAUSAL | GROUPING | {"scale": "[null, 0.5]"}, "bad_scale"),
    "scale a boolean": (QK, CAUSAL | GROUPING | {"scale": "[true, 0.5]"}, "bad_scale"),
    "scale huge": (QK, CAUSAL | GROUPING | {"scale": "[1e300, 0.5]"}, "bad_scale"),
    "softcap zero": (QK, CAUSAL | GROUPING | {"softcap": "[0, null]"}, "bad_softcap"),
    "softcap text": (QK, CAUSAL | GROUPING | {"softcap": '"tanh"'}, "bad_softcap"),
    "window fraction": (QK, CAUSAL | GROUPING | {"window": "[null, 2.5]"}, "bad_window"),
    "window zero": (QK, CAUSAL | GROUPING | {"window": "[0, 3]"}, "bad_window"),
    "window a boolean": (QK, CAUSAL | GROUPING | {"window": "[true, 3]"}, "bad_window"),
    "window too long": (QK, CAUSAL | GROUPING | {"window": "[null, 99999999999]"}, "bad_window"),
    "window too short for the weights": (QK, CAUSAL | GROUPING | {"window": "[null, 2]"}, "outside_window"),
    "window on full attention": (
        {"attentions": torch.softmax(torch.randn(L, H, T, T), -1).numpy()},
        meta_for(T, causal="false", window="[3, 3]"),
        "window_not_causal",
    ),
    "declined unknown": ({"attentions": A}, CAUSAL | {"qk_declined": "tired"}, "bad_declined"),
    "declined yet has them": (QK, CAUSAL | GROUPING | {"qk_declined": "mismatch"}, "bad_declined"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_each_hostile_field_gets_its_reason(case):
    tensors, meta, want = HOSTILE[case]
    assert reason("upload.safetensors", raw_file(tensors, meta)) == want


def test_the_window_the_file_states_is_accepted_when_the_weights_keep_to_it():
    f = load("w.safetensors", raw_file(QK, CAUSAL | GROUPING | {"window": "[null, 3]", "softcap": "[null, 2.0]"}))
    assert f.window == (None, 3) and f.softcap == (None, 2.0) and f.scale == ()


def test_the_query_key_map_of_a_grouped_head_uses_the_key_head_it_reads_and_its_window():
    f = grouped()
    fig = query_key_map(f, layer=1, head=3, query=5)
    want = qk_map(f.queries[1, 3].numpy(), f.keys[1, 1].numpy())  # query head 4 reads key/value head 2
    keys = next(tr for tr in fig.data if tr.name == "key")
    assert np.allclose(np.column_stack([keys.x, keys.y]), want.xy_k) and "key/value head 2" in fig.layout.title.text
    found = agreement(want, f.attentions[1, 3].numpy(), 5, causal=True, window=3)
    assert set(found.top.tolist()) <= {3, 4, 5}  # the window of 3 ends at the query: keys 3..5 only
    with pytest.raises(ValueError, match="no queries and keys"):
        query_key_map(load("a.safetensors", to_bytes(f.attentions, f.tokens)), 0, 0)
