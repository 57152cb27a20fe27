"""The course's answers on the Playground and Multi-head pages: one run of the Playground's pipeline, and the cut.

The Playground's tasks ask the presenter's questions (`attnlab.classroom.build`) about the run the link describes,
so they grade with the presenter's readers and explain with its sentences; the others read one weight of the run.
"""

from __future__ import annotations

from typing import Any

from attnlab.course.task import Answer, Unanswerable

CAUSAL_QUERY, CAUSAL_KEY = 0, 2  # "I like you": the weight I (row 1) gives you (column 3)
HEAD = 0  # the head every Playground task asks about (head 1 on screen)


def lab_run(v: dict[str, Any]):
    """The Playground's config and run for the page's values (its settings after the page's fall-backs)."""
    from attnlab.pipeline import LabConfig, decode_edits, run_lab

    edits, _ = decode_edits(v["edits"], v["d_model"])
    modern = {name: v[name] for name in ("kv_heads", "rope", "alibi", "mask", "window", "sinks", "prefix")}
    settings = (v["text"], v["d_model"], v["heads"], v["causal"], v["seed"], v["init"], v["pe"])
    config = LabConfig(*settings, tuple(sorted(edits.items())), **modern)
    result = run_lab(config)
    if not result.tokens:
        raise Unanswerable("text")
    return config, result


def shape(v: dict[str, Any]) -> Answer:
    """The shape of Q = X W_Q: the presenter's shape question, graded by its own reader."""
    from attnlab.classroom.build import questions_for_stage

    config, result = lab_run(v)
    question = questions_for_stage("q", config, result, head=HEAD)[0]
    t_len, d_model = question.shape
    return Answer(f"({t_len}, {d_model})", {"t": str(t_len), "d_model": str(d_model)}, question=question)


def top_key(v: dict[str, Any]) -> Answer:
    """The key the last token's row of head 1 weighs most: the presenter's argmax question on that row."""
    from attnlab.classroom.build import questions_for_stage

    config, result = lab_run(v)
    last = len(result.tokens) - 1
    asked = questions_for_stage("weights", config, result, head=HEAD, query=last)
    question = next(q for q in asked if q.qid == "argmax")
    top = question.top
    return Answer(result.tokens[top[0]], {"query": result.tokens[last]}, question=question)


def weight(v: dict[str, Any]) -> Answer:
    """Head 1's weight from the first token to the third, under whatever mask the page has now."""
    _, result = lab_run(v)
    tokens = result.tokens
    if len(tokens) <= CAUSAL_KEY:
        raise Unanswerable("tokens", n=CAUSAL_KEY + 1, have=len(tokens))
    row = result.steps.heads.weights[HEAD, CAUSAL_QUERY]  # (T,)
    blocked = bool(result.steps.heads.blocked[HEAD, CAUSAL_QUERY, CAUSAL_KEY])
    fields = {"query": tokens[CAUSAL_QUERY], "key": tokens[CAUSAL_KEY], "weight": f"{row[CAUSAL_KEY]:.2f}"}
    fields["row"] = " + ".join(f"{w:.2f}" for w in row.tolist())
    return Answer(float(row[CAUSAL_KEY]), fields, why="why_blocked" if blocked else "why")


def full_size_of(v: dict[str, Any]):
    """Section 9's shapes at the page's d_model and heads (heads that do not divide it: the largest divisor below)."""
    from attnlab.anatomy.heads import full_size
    from attnlab.params import divisor_at_most

    d_model = int(v["full_d"])
    return full_size(d_model, divisor_at_most(d_model, int(v["full_h"])), 1)


def head_width(v: dict[str, Any]) -> Answer:
    """d_k = d_model / H at the size section 9 shows."""
    size = full_size_of(v)
    return Answer(float(size.d_k), {"d_model": str(size.d_model), "heads": str(size.heads), "d_k": str(size.d_k)})


def projection_weights(v: dict[str, Any]) -> Answer:
    """W_Q, W_K, W_V and W_O together at that size: 4 d_model^2, whatever the number of heads."""
    size = full_size_of(v)
    fields = {"d_model": str(size.d_model), "heads": str(size.heads), "n": f"{size.projection_params:,}"}
    return Answer(float(size.projection_params), fields)
