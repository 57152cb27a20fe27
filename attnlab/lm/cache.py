"""The language model's key/value cache, whole or as StreamingLLM's window with sinks (contract 14's semantics).

Rows are stored per key/value head, (B, H_kv, t, d), after the rotation: a grouped model caches H / H_kv times
fewer numbers than its query heads read, which is the point of grouped heads. With a `window`, the cache keeps the
first `sinks` tokens and the last `window` (the newest included); every token, the prompt's too, attends only to
what the cache holds at its turn, and tokens keep their positions in the sequence (`positions`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


def check_window(window: int | None, sinks: int) -> None:
    """A window keeps at least one token (the newest); sinks are 0 or more. ValueError naming the argument."""
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        raise ValueError(f"window must be a whole number of at least 1 (or None: keep every token), got {window!r}")
    if isinstance(sinks, bool) or not isinstance(sinks, int) or sinks < 0:
        raise ValueError(f"sinks must be a whole number of 0 or more, got {sinks!r}")


def allowed(q_pos: torch.Tensor, k_pos: torch.Tensor, window: int | None, sinks: int, slide: int | None):
    """(T_q, T_k) bool, True = may attend: an earlier (or the same) key, inside the cache's window or a sink, and
    inside the layer's own sliding window (Mistral's: q - slide < k)."""
    q, k = q_pos[:, None], k_pos[None, :]
    ok = k <= q
    if window is not None:
        ok = ok & ((q - k < window) | (k < sinks))
    if slide is not None:
        ok = ok & (q - k < slide)
    return ok


@dataclass
class Cache:
    """Every layer's keys and values so far; `positions` are the sequence positions of the rows, `fed` the tokens
    given so far (the next token's position)."""

    window: int | None = None
    sinks: int = 0
    keys: list[torch.Tensor] = field(default_factory=list)
    values: list[torch.Tensor] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    fed: int = 0

    def __post_init__(self) -> None:
        check_window(self.window, self.sinks)

    @property
    def length(self) -> int:
        """Rows the cache holds now."""
        return len(self.positions)

    def kept(self, last: int) -> torch.Tensor:
        """(t,) bool over `positions` + the new ones up to `last`: what stays once `last` is in."""
        pos = torch.tensor([*self.positions, *range(self.fed, last + 1)], dtype=torch.long)
        if self.window is None:
            return torch.ones_like(pos, dtype=torch.bool)
        return (pos < self.sinks) | (pos > last - self.window)

    def extend(self, layer: int, k: torch.Tensor, v: torch.Tensor, evict_first: bool):
        """This layer's keys and values (B, H_kv, t, d) with the new rows appended, and their positions (t,).

        `evict_first` (one new token): the rows that fall out of the window go before the query looks, so what
        it attends over is exactly what the cache holds. Otherwise (several new tokens) every row is returned and
        the caller masks each query; `commit` evicts afterwards.
        """
        if layer == len(self.keys):
            self.keys.append(k[..., :0, :])
            self.values.append(v[..., :0, :])
        keys = torch.cat([self.keys[layer], k], -2)
        values = torch.cat([self.values[layer], v], -2)
        last = self.fed + k.size(-2) - 1
        pos = torch.tensor([*self.positions, *range(self.fed, last + 1)], dtype=torch.long)
        keep = self.kept(last)
        self.keys[layer], self.values[layer] = keys[..., keep, :], values[..., keep, :]
        if evict_first:
            return keys[..., keep, :], values[..., keep, :], pos[keep]
        return keys, values, pos

    def repeat(self, rows: int) -> Cache:
        """A copy holding `rows` copies of this cache's one sequence (B = rows): one prompt continued several ways."""
        if self.keys and self.keys[0].size(0) != 1:
            raise ValueError("only a cache of one sequence can be repeated")
        keys = [k.expand(rows, -1, -1, -1).contiguous() for k in self.keys]
        values = [v.expand(rows, -1, -1, -1).contiguous() for v in self.values]
        return Cache(self.window, self.sinks, keys, values, list(self.positions), self.fed)

    def row(self, b: int) -> Cache:
        """Sequence b of a batched cache as a cache of its own (B = 1; its tensors are views, not copies)."""
        keys, values = [k[b : b + 1] for k in self.keys], [v[b : b + 1] for v in self.values]
        return Cache(self.window, self.sinks, keys, values, list(self.positions), self.fed)

    def commit(self, n_new: int) -> None:
        """After every layer has taken the new tokens: record which positions the cache now holds."""
        last = self.fed + n_new - 1
        seen = [*self.positions, *range(self.fed, last + 1)]
        keep = self.kept(last).tolist()
        self.positions = [p for p, k in zip(seen, keep, strict=True) if k]
        self.fed = last + 1
