"""RoPE lesson: one pair turning with the position, each pair's frequency, a shift that changes no score, the decay.

Every number goes through `attnlab.positions` (the library's own `rope`), so the lesson shows what the Playground
and a Llama layer compute. Choices the issue left open: q and k are seeded N(0, 1) vectors; scores are scaled by
1/sqrt(d) as attention scales them; the decay follows RoFormer section 3.4.3 (its relative upper bound
(2/d) * sum_j |S_j|, S_j = sum_{k<j} e^{i r theta_k}) beside the score of one vector against itself r apart,
averaged over seeded samples; both divided by their value at distance 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from attnlab.positions import frequencies, pairs, rope

N_TOKENS = 8  # positions in the shift demo's score matrix: an 8 x 8 grid stays readable
N_TRAIL = 48  # positions the plane draws before the current one: enough for a turn of the fastest pair
N_SAMPLES = 32  # seeded q (and k) vectors the decay's mean scores average over
MAX_GRID = 513  # distances the decay evaluates: every one up to 512, evenly spread beyond


def _gen(seed: int, salt: int) -> torch.Generator:
    """A generator per use, so the plane's q and the shift demo's q, k do not depend on each other's sizes."""
    return torch.Generator().manual_seed(int(seed) * 4 + salt)


def vectors(n: int, d: int, seed: int, salt: int) -> torch.Tensor:
    """(n, d) float64 N(0, 1) vectors drawn from the seed."""
    return torch.randn(n, d, generator=_gen(seed, salt), dtype=torch.float64)


@dataclass(frozen=True)
class PairTurn:
    """Pair i of one vector at positions up to `pos`: the two dimensions it rotates, and where it points."""

    pair: int
    dims: tuple[int, int]  # which two dimensions of q form the pair in this layout
    theta: float  # angle per position, base**(-2i/d)
    pos: int
    trail: np.ndarray  # (n, 2): the pair at positions pos-n+1 .. pos
    positions: np.ndarray  # (n,) those positions

    @property
    def angle(self) -> float:
        """The angle the pair has turned by at `pos`, in radians."""
        return self.pos * self.theta

    @property
    def wavelength(self) -> float:
        """Positions for one full turn: 2*pi / theta."""
        return 2.0 * math.pi / self.theta

    @property
    def now(self) -> np.ndarray:
        """(2,): the pair at `pos`."""
        return self.trail[-1]


def pair_turn(d: int, base: float, pair: int, pos: int, seed: int, interleaved: bool) -> PairTurn:
    """Rotate one seeded q with the library's rope at the last N_TRAIL positions up to `pos`; keep pair `pair`."""
    if not 0 <= pair < d // 2:
        raise ValueError(f"pair must be in 0..{d // 2 - 1} for d={d}, got {pair}")
    if pos < 0:
        raise ValueError(f"pos must be 0 or more, got {pos}")
    q = vectors(1, d, seed, 0)  # (1, d)
    shown = torch.arange(max(0, pos - N_TRAIL + 1), pos + 1)  # (n,)
    turned = rope(q.expand(len(shown), d), shown, base=base, interleaved=interleaved)  # (n, d)
    a, b = pairs(d, interleaved)[pair]
    theta = float(frequencies(d, base)[pair])
    return PairTurn(pair, (a, b), theta, pos, turned[:, [a, b]].numpy(), shown.numpy())


@dataclass(frozen=True)
class Frequencies:
    """Each pair's angle per position and the positions one turn takes."""

    theta: np.ndarray  # (d/2,) base**(-2i/d)
    wavelength: np.ndarray  # (d/2,) 2*pi / theta


def pair_frequencies(d: int, base: float) -> Frequencies:
    """theta_i = base**(-2i/d) for every pair i, and its wavelength."""
    theta = frequencies(d, base).numpy()
    return Frequencies(theta, 2.0 * math.pi / theta)


def scores(q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor, base: float, interleaved: bool) -> torch.Tensor:
    """(T, T) q_m . k_n / sqrt(d) after rotating both at `positions`: the scaled scores attention sees.

    Summed elementwise rather than by a matmul: at 8 x d a BLAS call costs more in waking its threads than the sums
    do (a transposed float64 matmul took 4 ms of CPU on a busy 2-core server, the products 0.04 ms).
    """
    d = q.size(-1)
    qr = rope(q, positions, base=base, interleaved=interleaved)  # (T, d)
    kr = rope(k, positions, base=base, interleaved=interleaved)  # (T, d)
    return (qr[:, None, :] * kr[None, :, :]).sum(-1) / math.sqrt(d)  # (T, T)


def half_order(d: int) -> torch.Tensor:
    """The dimension order that turns interleaved pairs (2i, 2i+1) into rotate-half pairs (i, i + d/2).

    This is the permutation transformers' Llama conversion script applies to the rows of Meta's W_Q and W_K.
    """
    return torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))


@dataclass(frozen=True)
class ShiftCheck:
    """The same q, k at positions 0..T-1 and shifted by `shift`, in both layouts."""

    shift: int
    before: np.ndarray  # (T, T) scores at positions 0..T-1
    after: np.ndarray  # (T, T) scores at positions shift..shift+T-1
    max_diff: float  # max |after - before|: rounding only
    other: np.ndarray  # (T, T) the same q, k under the other layout
    layouts_diff: float  # max |before - other|: far from 0, the layouts disagree
    permuted_diff: float  # the other layout on q, k with their dimensions reordered (a checkpoint's conversion)


def shift_check(d: int, base: float, seed: int, shift: int, interleaved: bool, n: int = N_TOKENS) -> ShiftCheck:
    """Scores of seeded q, k before and after moving every position by `shift`, and under the other layout."""
    if shift < 0:
        raise ValueError(f"shift must be 0 or more, got {shift}")
    q, k = vectors(n, d, seed, 1), vectors(n, d, seed, 2)  # (T, d) each
    at = torch.arange(n)
    before = scores(q, k, at, base, interleaved)
    after = scores(q, k, at + shift, base, interleaved)
    other = scores(q, k, at, base, not interleaved)
    order = half_order(d)  # interleaved dims -> rotate-half dims
    if interleaved:  # the other layout is rotate-half: give it q, k reordered so its pairs are ours
        converted = scores(q[:, order], k[:, order], at, base, False)
    else:  # the other is interleaved: undo the reordering so its pairs (2i, 2i+1) are our (i, i + d/2)
        back = torch.argsort(order)
        converted = scores(q[:, back], k[:, back], at, base, True)
    return ShiftCheck(
        shift,
        before.numpy(),
        after.numpy(),
        float((after - before).abs().max()),
        other.numpy(),
        float((before - other).abs().max()),
        float((converted - before).abs().max()),
    )


def distance_grid(max_dist: int) -> np.ndarray:
    """Relative distances 0..max_dist: every one up to MAX_GRID points, evenly spread (rounded) beyond."""
    if max_dist < 1:
        raise ValueError(f"max_dist must be at least 1, got {max_dist}")
    if max_dist < MAX_GRID:
        return np.arange(max_dist + 1)
    return np.unique(np.round(np.linspace(0, max_dist, MAX_GRID)).astype(np.int64))


def relative_bound(d: int, base: float, distances: np.ndarray) -> np.ndarray:
    """RoFormer's relative upper bound (2/d) * sum_{j=1}^{d/2} |S_j(r)|, S_j = sum_{k<j} e^{i r theta_k}, per r."""
    theta = frequencies(d, base).numpy()  # (d/2,)
    turns = np.exp(1j * np.outer(distances, theta))  # (R, d/2)
    return np.abs(np.cumsum(turns, axis=1)).mean(axis=1)  # (R,)


def abel_bound(q: torch.Tensor, k: torch.Tensor, base: float, distance: int) -> float:
    """The bound of RoFormer (3.4.3) on one score: max_i |h_{i+1} - h_i| * sum_j |S_j(r)|, h_{d/2} = 0.

    h_i = q_pair_i * conj(k_pair_i) as complex numbers (interleaved pairs), so that |q_m . k_n| <= this bound for
    r = n - m = `distance` (summation by parts).
    """
    d = q.size(-1)
    qc = torch.complex(q[0::2], q[1::2])
    kc = torch.complex(k[0::2], k[1::2])
    h = torch.cat((qc * kc.conj(), torch.zeros(1, dtype=qc.dtype))).numpy()  # (d/2 + 1,)
    step = np.abs(np.diff(h)).max()
    return float(step * relative_bound(d, base, np.array([distance]))[0] * (d // 2))


@dataclass(frozen=True)
class Decay:
    """How the scores fall off with relative distance, each curve divided by its value at distance 0."""

    distances: np.ndarray  # (R,)
    bound: np.ndarray  # (R,) RoFormer's relative upper bound / its value at 0, (d/2 + 1)/2
    same: np.ndarray  # (R,) mean q . R_r q over the samples / mean q . q: one vector against itself r apart
    bound_at_0: float  # (d/2 + 1) / 2


def decay(d: int, base: float, max_dist: int, seed: int, interleaved: bool, samples: int = N_SAMPLES) -> Decay:
    """The two curves over `distance_grid(max_dist)`, the scores rotated by the library's rope at 0 and at r."""
    r = distance_grid(max_dist)
    bound = relative_bound(d, base, r)
    q = vectors(samples, d, seed, 3)  # (S, d)
    at = torch.as_tensor(r)
    q_far = rope(q[:, None, :].expand(samples, len(r), d), at, base=base, interleaved=interleaved)  # (S, R, d)
    same = torch.einsum("srd,sd->sr", q_far, q).mean(0) / (q * q).sum(-1).mean()  # rope at position 0 is identity
    return Decay(r, bound / bound[0], same.numpy(), float(bound[0]))
