"""The course's tasks in learning order: each one's id, page, starting link, kind, form, tolerance and answer.

From the soft dictionary, scaling and masking, through the Playground, Multi-head and RoPE, to the trained
decoder's induction head, the language model's prediction and heads, and the key/value cache. The words (prompt,
hints, options, the sentence that explains an answer) are in `attnlab/locales/<lang>/course.toml` under
`task.<id>`. `act` is the change each prompt asks for: the tests check that it moves the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import attnlab.course.explore as explore  # the modules themselves: `from attnlab.course import` would reach the package
import attnlab.course.lessons as lessons
import attnlab.course.models as models
from attnlab.course.ids import IDS
from attnlab.course.task import Rule
from attnlab.limits import TOL_ANSWER_BYTES, TOL_ANSWER_ESTIMATE, TOL_ANSWER_READ, TOL_ANSWER_WEIGHT
from attnlab.links.models import SHIPPED_HEADS

__all__ = ["BY_ID", "IDS", "SYLLABUS", "Entry", "link_of"]

READ, ESTIMATE, BYTES = (
    (0.0, TOL_ANSWER_READ),
    (0.0, TOL_ANSWER_ESTIMATE),
    (0.0, TOL_ANSWER_BYTES),
)  # (absolute, relative)
WEIGHT = (TOL_ANSWER_WEIGHT, 0.0)
HEAD_OF = (models.LAYER + 1, SHIPPED_HEADS)  # the head tasks: layer 2 of 2, four heads (both decoders and both models)
LM_TEXTS = {"zh": "床前明月光，疑是地上", "en": "In the beginning God created the heaven and the ear"}
SECTION_9 = {"open": "full"}  # Multi-head's real model's sizes, folded on a plain visit (issue 61)
LM_OTHER = {"zh": "举头望明月，低头思故", "en": "And God said, Let there be lig"}


@dataclass(frozen=True)
class Entry:
    """One task of the syllabus, before its words: where it is, what kind of answer it takes, how it is graded."""

    id: str
    page: str  # the registry's url_path
    kind: str  # "number", "choice" or "text"
    rule: Rule
    link: dict[str, str] = field(default_factory=dict)  # the same in both languages ...
    per_lang: bool = False  # ... or the language model's text in each language (LM_TEXTS)


def lm_rule(answer, form: str, tol: tuple[float, float] = (0.0, 0.0)) -> Rule:
    """A language-model task: another text changes its answer (the act is written in English; both models read it)."""
    return Rule(answer, form, tol, act={"text": LM_OTHER["en"], "model": "en"})


SYLLABUS: tuple[Entry, ...] = (
    Entry("dict-weighted", "soft-dictionary", "number", Rule(lessons.weighted, "value", READ, {"w_apple": "0.2"})),
    Entry("dict-temperature", "soft-dictionary", "number", Rule(lessons.soft, "value", READ, {"temp": "0"})),
    Entry("scaling-variance", "scaling", "number", Rule(lessons.variance, "value", ESTIMATE, {"dk": "256"})),
    Entry("scaling-unscaled", "scaling", "number", Rule(lessons.top_weight, "share", WEIGHT, {"scaled": "false"})),
    Entry(
        "masking-weight",
        "masking",
        "number",
        Rule(lessons.causal_weight, "share", WEIGHT, {"text": "<BOS> you like me <EOS>"}),
    ),
    Entry(
        "masking-row",
        "masking",
        "choice",
        Rule(lessons.blocked_row, "choice", act={"dtype": "float32", "fill": "-inf"}, choices=lessons.FILL_KINDS),
    ),
    Entry("playground-shape", "playground", "text", Rule(explore.shape, "question", act={"text": "I like you"})),
    Entry(
        "playground-causal",
        "playground",
        "number",
        Rule(explore.weight, "share", WEIGHT, {"causal": "true"}),
        {"text": "I like you"},
    ),
    Entry("playground-top", "playground", "text", Rule(explore.top_key, "question", act={"seed": "3"})),
    Entry("multihead-dk", "multihead", "number", Rule(explore.head_width, "count", act={"full_h": "16"}), SECTION_9),
    Entry(
        "multihead-weights",
        "multihead",
        "number",
        Rule(explore.projection_weights, "count", act={"full_d": "4096", "full_h": "32"}),
        SECTION_9,
    ),
    Entry("rope-angle", "rope", "number", Rule(lessons.angle, "value", READ, {"pos": "10"})),
    Entry("rope-wavelength", "rope", "number", Rule(lessons.wavelength, "value", READ, {"pair": "31"})),
    Entry(
        "decoder-head", "decoder", "number", Rule(models.induction_head, "head", act={"step": "150"}, head_of=HEAD_OF)
    ),
    Entry(
        "decoder-confidence",
        "decoder",
        "number",
        Rule(models.confidence, "share", WEIGHT, {"step": "150"}),
        {"open": "table"},  # the guesses' table, folded on a plain visit
    ),
    Entry("lm-next", "lm", "text", lm_rule(models.next_character, "character"), per_lang=True),
    Entry("lm-probability", "lm", "number", lm_rule(models.next_probability, "share", WEIGHT), per_lang=True),
    Entry(
        "lm-previous",
        "lm",
        "number",
        Rule(models.previous_head, "head", act={"step": "75"}, head_of=HEAD_OF),
    ),
    Entry("kv-per-token", "kv-cache", "number", Rule(models.per_token, "bytes", BYTES, {"bytes": "fp8"})),
    Entry("kv-context", "kv-cache", "number", Rule(models.whole_cache, "bytes", BYTES, {"context": "131072"})),
)
BY_ID: dict[str, Entry] = {entry.id: entry for entry in SYLLABUS}


def link_of(entry: Entry, lang: str) -> dict[str, str]:
    """The query that opens the entry's page where its task starts, in a language."""
    if entry.per_lang:
        return {"text": LM_TEXTS["zh" if lang == "zh" else "en"]}
    return dict(entry.link)
