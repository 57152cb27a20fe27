"""The language model's head finder: four scores per head, read from its weights on one text.

For one head's causal weights A (T x T, token 0 the <bos> the model always starts from):
    sink         mean over queries i >= 1 of A[i, 0]: weight parked on the first token (the attention sink)
    previous     mean over queries i >= 2 of A[i, i - 1] (query 1's previous token is the sink itself)
    line         mean over queries i >= 1 + P of A[i, i - P], P the text's line period (a regular poem: clause
                 length + 1): the same place one line earlier; None when the text has no period
    induction    mean over the queries whose last two tokens occurred together earlier (at j - 1, j) of the
                 weight on the tokens right after those earlier occurrences (j + 1): in-context copying, as in a
                 text written twice; None when no two tokens repeat
Sink, previous and line are the shares `attnlab.lm.metrics` records for a run (there over held-out text).
The induction score matches two tokens, not one: with one letter, nearly every English query has earlier matches.
"""

from __future__ import annotations

import re

import torch

SCORES = ("previous", "sink", "line", "induction")
CLAUSE_END = "，。？！；、,.?!;:\n"
MIN_CLAUSES = 2


def line_period(tokens: tuple[str, ...], lead: int = 1) -> int | None:
    """P when every clause of the text (the tokens after <bos>) is n tokens and one mark: n + 1; else None."""
    body = "".join(tokens[lead:])
    if len(body) != len(tokens) - lead:  # multi-character tokens: no character period to read
        return None
    clauses = re.findall(rf"([^{re.escape(CLAUSE_END)}]*)[{re.escape(CLAUSE_END)}]", body)
    sizes = {len(c) for c in clauses}
    if len(clauses) < MIN_CLAUSES or len(sizes) != 1 or 0 in sizes:
        return None
    return sizes.pop() + 1


def continuations(tokens: tuple[str, ...]) -> list[tuple[int, list[int]]]:
    """(query i, the keys j + 1 after each earlier j where tokens j - 1, j equal tokens i - 1, i), for every query
    that has at least one (j + 1 <= i: a key the query can see)."""
    seen: dict[tuple[str, str], list[int]] = {}
    found = []
    for i in range(2, len(tokens)):
        pair = (tokens[i - 1], tokens[i])
        earlier = [j + 1 for j in seen.get(pair, []) if j + 1 <= i]
        if earlier:
            found.append((i, earlier))
        seen.setdefault(pair, []).append(i)
    return found


def head_scores(attentions: torch.Tensor, tokens: tuple[str, ...], lead: int = 1) -> dict[str, torch.Tensor | None]:
    """Every head's four scores, each (L, H) float64 or None where the text cannot show it."""
    a = attentions.double()  # (L, H, T, T)
    t = a.size(-1)
    i = torch.arange(t)
    out: dict[str, torch.Tensor | None] = dict.fromkeys(SCORES)
    if t >= 2:
        out["sink"] = a[..., 1:, 0].mean(-1)
    if t >= 3:
        out["previous"] = a[..., i[2:], i[1:-1]].mean(-1)
    period = line_period(tokens, lead)
    if period is not None and t > 1 + period:
        q = i[1 + period :]
        out["line"] = a[..., q, q - period].mean(-1)
    pairs = continuations(tokens)
    if pairs:
        out["induction"] = torch.stack([a[..., q, keys].sum(-1) for q, keys in pairs], -1).mean(-1)
    return out
