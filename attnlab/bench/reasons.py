"""Why an implementation did not run, in one sentence: the forced SDPA backend's own reason out of PyTorch's text.

With one backend forced (`sdpa_kernel`), PyTorch warns about every backend it checked, each as a header ("Flash
attention kernel not used because:") followed by that backend's reasons, most with a "(Triggered internally at
<path>)" trailer, then raises "No available kernel". The backends `sdpa_kernel` switched off say only that they
were "runtime disabled". `distil` finds the forced backend's own part and names its first reason as a `Reason`: a
key the page translates (`benchmark.reason_<key>`), the values it needs, and the English sentence the CLI writes
into a row's status (`unsupported: <sentence>`, PyTorch's whole text going to the row's `detail`). Files recorded
before that kept only PyTorch's text, cut at 600 characters, in the status: the page distils them the same way,
and where the cut fell before the forced backend's own reason the `Reason` says so (`cut`) rather than guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BACKENDS = {  # impl -> (the header PyTorch writes for it, lower case; the name a sentence gives it)
    "sdpa-flash": ("flash attention", "Flash attention"),
    "sdpa-efficient": ("memory efficient", "the memory-efficient kernel"),
    "sdpa-cudnn": ("cudnn attention", "cuDNN attention"),
    "sdpa-math": ("math", "the math kernel"),
}
TRACE = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?")
OPEN_TRACE = re.compile(r"\s*\(Trigger[^)]*$")  # a trailer the old 600-character cut left open
HEADER = re.compile(r"^(.+?) kernel not used because:?$", re.IGNORECASE)
NO_KERNEL = re.compile(r"^(No available kernel|No viable backend)", re.IGNORECASE)
DTYPE = re.compile(r"Expected query, key and value to all be of dtype: \{([^}]*)\}\. Got Query dtype: (\w+)")
HEADS = re.compile(r"Query\.sizes\(\): \[\d+, (\d+),.*?Key sizes\(\): \[\d+, (\d+),")
TORCH_DTYPES = {"half": "float16", "bfloat16": "bfloat16", "float": "float32", "double": "float64"}
OWN = (  # attnlab's own reasons (impls, measure, plan): a key each; the sentence stays as written
    ("nn.MultiheadAttention did not take its fast path", "mha_slow"),
    ("nn.MultiheadAttention has one key/value head per query head", "mha_gqa"),
    ("left out by the record plan", "plan"),
)


@dataclass(frozen=True)
class Reason:
    """One implementation's reason for not running: `key` picks the sentence, the fields fill it."""

    key: str  # dtype, mask, same_heads, not_built, no_kernel, cut, mha_slow, mha_gqa, plan, other
    impl: str
    allowed: tuple[str, ...] = ()  # dtype: the dtypes the backend takes
    got: str = ""  # dtype: the one it was given
    heads: tuple[int, int] | None = None  # same_heads: (query heads, key/value heads), when PyTorch said
    device: str = ""  # no_kernel: cpu or cuda
    text: str = ""  # other, and attnlab's own reasons: the sentence as written

    @property
    def backend(self) -> str:
        """The backend's name in a sentence ('Flash attention', 'the memory-efficient kernel'), or the impl."""
        return BACKENDS.get(self.impl, ("", self.impl))[1]

    @property
    def sentence(self) -> str:
        """The reason in one English sentence, without a full stop (what the CLI writes after 'unsupported: ')."""
        who = self.backend
        said = {
            "dtype": f"{who} needs {' or '.join(self.allowed)} (got {self.got})",
            "mask": f"{who} takes no attention mask",
            "same_heads": f"{who} needs as many key/value heads as query heads"
            + (f" (got {self.heads[0]} query and {self.heads[1]} key/value heads)" if self.heads else ""),
            "not_built": f"{who} is not built into this PyTorch",
            "no_kernel": f"{who} has no {self.device.upper() or 'device'} implementation in this PyTorch",
            "cut": f"{who}'s own reason was cut off when this file was written",
        }.get(self.key, self.text)
        return "The" + said[3:] if said.startswith("the ") else said


def _pieces(text: str) -> tuple[list[str], bool]:
    """PyTorch's messages one by one, trailers gone, and whether the text was cut short ('…' at its end)."""
    cut = text.endswith("…")
    text = OPEN_TRACE.sub("", TRACE.sub("", text.removesuffix("…")))
    return [p.strip() for p in text.split("; ") if p.strip()], cut


def _segments(pieces: list[str]) -> dict[str, list[str]]:
    """Each backend's own messages under its header ('' holds what no header precedes, and PyTorch's final error)."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for piece in pieces:
        header = HEADER.match(piece)
        if header:
            current = header.group(1).lower()
            out.setdefault(current, [])
        elif NO_KERNEL.match(piece):
            out[""].append(piece)
        elif "has been runtime disabled" not in piece:  # what sdpa_kernel did to every other backend
            out[current].append(piece)
    return out


def first_sentence(text: str) -> str:
    """A message's first sentence, without its full stop."""
    return re.split(r"(?<=[a-z0-9)\]])\. ", text, maxsplit=1)[0].rstrip(". ")


def _classify(impl: str, piece: str) -> Reason:
    """One of PyTorch's messages about the forced backend, as a Reason."""
    found = DTYPE.search(piece)
    if found:
        allowed = tuple(TORCH_DTYPES.get(d.strip().lower(), d.strip()) for d in found.group(1).split(","))
        return Reason("dtype", impl, allowed=allowed, got=TORCH_DTYPES.get(found.group(2).lower(), found.group(2)))
    if "does not support non-null attn_mask" in piece:
        return Reason("mask", impl)
    if "to have the same num_heads" in piece:
        sizes = HEADS.search(piece)
        return Reason("same_heads", impl, heads=(int(sizes.group(1)), int(sizes.group(2))) if sizes else None)
    if "was not compiled with" in piece:
        return Reason("not_built", impl)
    return Reason("other", impl, text=first_sentence(piece))


def distil(impl: str, text: str, device: str = "") -> Reason:
    """The reason `impl` did not run, from PyTorch's text (or attnlab's own sentence) about it.

    The forced backend's own first message when PyTorch gave one; `cut` when the text was cut before it; `no_kernel`
    when PyTorch found no kernel and wrote no header for the backend at all (the CPU has no memory-efficient or cuDNN
    kernel); otherwise the first sentence said, trailers removed (`other`).
    """
    for start, key in OWN:
        if text.startswith(start):
            return Reason(key, impl, text=text)
    pieces, cut = _pieces(text)
    segments = _segments(pieces)
    header = BACKENDS.get(impl, ("",))[0]
    own = segments.get(header) if header else None
    if own:
        return _classify(impl, own[0])
    if cut and (own is not None or not segments[""]):
        return Reason("cut", impl)
    if own is None and segments[""] and NO_KERNEL.match(segments[""][0]) and impl in BACKENDS:
        return Reason("no_kernel", impl, device=device)
    rest = segments[""] or [p for part in segments.values() for p in part] or pieces or [text]
    return _classify(impl, rest[0])
