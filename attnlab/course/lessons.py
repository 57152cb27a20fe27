"""The course's answers on the lesson pages: the soft dictionary, scaling, masking and RoPE, from the lessons' core.

Each function takes the page's values (its link as the page reads it) and returns what the page draws now, with
the same core call and the same fall-backs as the page's sections.
"""

from __future__ import annotations

import math
from typing import Any

from attnlab.course.task import Answer, Unanswerable
from attnlab.limits import MAX_MASKING_TOKENS

MASK_QUERY, MASK_KEY = 2, 1  # the masking task's cell: the third token's weight on the second (0-based)
FILL_KINDS = ("nan", "uniform", "refused", "none")  # what a plain softmax makes of a row that may see nothing


def num(x: float) -> str:
    """A number as the lesson pages print it: up to four decimals, no trailing zeros."""
    from attnlab.params import dump_float

    return dump_float(round(float(x), 4))


def dictionary_values(v: dict[str, Any]) -> list[float]:
    """The three values of the dictionary, in the lesson's key order."""
    from attnlab.lessons.dictionary import KEYS

    return [float(v[f"v_{k}"]) for k in KEYS]


def weighted(v: dict[str, Any]) -> Answer:
    """Section 2: sum of w_i v_i with the weights typed by hand (the seed's 0.6 * 10 + 0.4 * 5 + 0 * 2 = 8)."""
    from attnlab.lessons.dictionary import KEYS, weighted_lookup

    values = dictionary_values(v)
    lookup = weighted_lookup([v[f"w_{k}"] for k in KEYS], values)
    terms = " + ".join(f"{num(v[f'w_{k}'])} · {num(x)}" for k, x in zip(KEYS, values, strict=True))
    return Answer(lookup.total, {"terms": terms, "value": num(lookup.total)})


def vectors(v: dict[str, Any]) -> tuple[list[float], list[list[float]]]:
    """The query and keys the page uses: each typed vector or the lesson's own, all of them when widths differ."""
    from attnlab.lessons.dictionary import KEY_VECTORS, KEYS, QUERY_VECTOR
    from attnlab.lessons.parse import parse_vector

    def vector(text: str, default: tuple[float, ...]) -> list[float]:
        try:
            return parse_vector(text)
        except ValueError:
            return list(default)

    q = vector(v["q"], QUERY_VECTOR)
    keys = [vector(v[f"k_{k}"], d) for k, d in zip(KEYS, KEY_VECTORS, strict=True)]
    if any(len(k) != len(q) for k in keys):
        return list(QUERY_VECTOR), [list(k) for k in KEY_VECTORS]
    return q, keys


def soft(v: dict[str, Any]) -> Answer:
    """Section 3: the value softmax(q.k / (sqrt(d_k) tau)) . v returns at the page's temperature."""
    from attnlab.lessons.dictionary import KEYS, soft_lookup

    q, keys = vectors(v)
    found = soft_lookup(q, keys, dictionary_values(v), float(v["temp"]))
    weights = ", ".join(f"{k} {num(w)}" for k, w in zip(KEYS, found.weights, strict=True))
    return Answer(found.value, {"temp": num(v["temp"]), "weights": weights, "value": num(found.value)})


def variance(v: dict[str, Any]) -> Answer:
    """Section 1: Var(q.k) measured over the lesson's 4,000 draws at the page's d_k (the page's `variance_curve`)."""
    from attnlab.lessons.scaling import variance_curve

    dk, seed = int(v["dk"]), int(v["seed"])
    curve = variance_curve([dk], 4000, seed)  # each d_k's draws are seeded by (seed, d_k): the page's grid gives these
    measured = float(curve.var_raw[0])
    return Answer(measured, {"dk": str(dk), "measured": f"{measured:.4g}", "sd": f"{math.sqrt(dk):.3g}"}, (dk,))


def top_weight(v: dict[str, Any]) -> Answer:
    """Section 3: the largest softmax weight of the one query, with or without the division by sqrt(d_k)."""
    from attnlab.lessons.scaling import one_query

    one = one_query(int(v["dk"]), int(v["keys"]), bool(v["scaled"]), int(v["seed"]))
    spread = float(one.logits.max() - one.logits.min())
    fields = {"top": f"{one.weights.max():.4f}", "spread": f"{spread:.4g}", "keys": str(v["keys"])}
    return Answer(float(one.weights.max()), fields, why="why_scaled" if v["scaled"] else "why")


def masked_tokens(v: dict[str, Any]) -> list[str]:
    """The lesson's tokens, cut to its size as the page cuts them."""
    from attnlab.tokens import tokenize

    return tokenize(v["text"])[:MAX_MASKING_TOKENS]


def causal_weight(v: dict[str, Any]) -> Answer:
    """Section 1: the third token's causal weight on the second (the page's `parallel_vs_sequential`)."""
    from attnlab.lessons.masking import parallel_vs_sequential

    tokens = masked_tokens(v)
    if len(tokens) <= MASK_QUERY:
        raise Unanswerable("tokens", n=MASK_QUERY + 1, have=len(tokens))
    row = parallel_vs_sequential(tokens).weights[MASK_QUERY]
    fields = {"query": tokens[MASK_QUERY], "key": tokens[MASK_KEY], "weight": f"{row[MASK_KEY]:.2f}"}
    fields["row"] = " + ".join(f"{w:.2f}" for w in row[: MASK_QUERY + 1].tolist())
    return Answer(float(row[MASK_KEY]), fields)


def blocked_row(v: dict[str, Any]) -> Answer:
    """Section 2: what the naive softmax makes of the row that may see nothing, at the page's dtype and fill."""
    from attnlab.lessons.masking import fill_table, row_kind

    tokens = masked_tokens(v)
    if not tokens:
        raise Unanswerable("text")
    pick = next(r for r in fill_table(tokens, v["blank"]) if r.dtype == v["dtype"] and r.fill == v["fill"])
    kind, weight = row_kind(pick.blank_row)
    kind = "refused" if pick.error else kind
    kind = kind if kind in FILL_KINDS else "uniform"
    fields = {"dtype": v["dtype"], "fill": v["fill"], "stored": f"{pick.stored:.10g}", "t": str(len(tokens))}
    return Answer(kind, fields | {"w": f"{weight or 0:.4g}"}, why=f"why_{kind}")


def rope_settings(v: dict[str, Any]) -> tuple[int, float, bool, int]:
    """d, base, interleaved and seed as the page uses them (an odd d made even, a base not above 1 replaced)."""
    from attnlab.limits import MAX_ROPE_D
    from attnlab.params import next_even

    d = next_even(v["d"], MAX_ROPE_D) if v["d"] % 2 else v["d"]
    base = v["base"] if v["base"] > 1.0 else 10000.0
    return d, base, v["layout"] == "interleaved", int(v["seed"])


def turn(v: dict[str, Any]):
    """Section 1's pair at the page's pair and position (a pair past the last one at d is the last one)."""
    from attnlab.lessons.rope import pair_turn

    d, base, interleaved, seed = rope_settings(v)
    return pair_turn(d, base, min(int(v["pair"]), d // 2 - 1), int(v["pos"]), seed, interleaved)


def angle(v: dict[str, Any]) -> Answer:
    """Section 1: the angle the chosen pair has turned by at the chosen position, p * theta_i, in radians."""
    found = turn(v)
    fields = {"pos": str(found.pos), "pair": str(found.pair), "theta": f"{found.theta:.6g}"}
    return Answer(found.angle, fields | {"angle": f"{found.angle:.4g}"})


def wavelength(v: dict[str, Any]) -> Answer:
    """Section 1: the positions the chosen pair takes for one full turn, 2 pi / theta_i."""
    found = turn(v)
    fields = {"pair": str(found.pair), "theta": f"{found.theta:.6g}", "wavelength": f"{found.wavelength:.4g}"}
    return Answer(found.wavelength, fields)
