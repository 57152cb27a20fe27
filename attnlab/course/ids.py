"""The course's task ids in learning order, alone: what a link's `task` and `done` are read against.

Kept apart from the tasks themselves (`attnlab.course.syllabus`, which a test holds to this order) so that reading
a link (`attnlab.links.common`) imports nothing of the machinery that grades the tasks.
"""

from __future__ import annotations

IDS: tuple[str, ...] = (
    "dict-weighted",
    "dict-temperature",
    "scaling-variance",
    "scaling-unscaled",
    "masking-weight",
    "masking-row",
    "playground-shape",
    "playground-causal",
    "playground-top",
    "multihead-dk",
    "multihead-weights",
    "rope-angle",
    "rope-wavelength",
    "decoder-head",
    "decoder-confidence",
    "lm-next",
    "lm-probability",
    "lm-previous",
    "kv-per-token",
    "kv-context",
)
