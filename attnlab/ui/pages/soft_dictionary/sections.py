"""The soft dictionary lesson's sections: the hard lookup, the weighted one, vectors, softmax with a temperature."""

import numpy as np
import streamlit as st

from attnlab import links
from attnlab.figures.lessons import key_plane, temperature_figure, weights_bar
from attnlab.lessons import dictionary as lesson
from attnlab.lessons.parse import dump_vector, parse_vector
from attnlab.params import dump_float
from attnlab.ui.app import first_screen, latex
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.text import code
from attnlab.ui.app.widgets import chart, code_line, number, slider, text_input

KEYS = lesson.KEYS
PAGE = PageState("ldict", links.params("ldict"))


def f(x: float) -> str:
    """A number as the page prints it: 0.6, 10, 7.234."""
    return dump_float(round(float(x), 4))


def vector(name: str, shown: str, default: tuple[float, ...]) -> list[float]:
    """The vector typed into one box, or the default with a warning that quotes what was typed."""
    raw = PAGE[name]
    try:
        return parse_vector(raw)
    except ValueError as bad:
        used = dump_vector(list(default))
        st.warning(
            t(f"lesson_dictionary.bad_vector_{bad}", name=shown, raw=code(raw), used=code(used)),
            icon=":material/warning:",
        )
        return list(default)


def hard_dictionary() -> list[float]:
    """1. An exact-match lookup over the values the user sets; returns the values."""
    st.subheader(t("lesson_dictionary.hard_title"))
    st.markdown(t("lesson_dictionary.hard_body"))
    st.markdown(f"**{t('lesson_dictionary.values_label')}**")
    for col, key in zip(st.columns(3), KEYS, strict=True):
        number(PAGE, f"v_{key}", f"`{key}`", where=col)
    values = [PAGE[f"v_{k}"] for k in KEYS]
    code_line("{" + ", ".join(f'"{k}": {f(v)}' for k, v in zip(KEYS, values, strict=True)) + "}")
    left, right = st.columns([2, 3], vertical_alignment="bottom")
    text_input(PAGE, "word", t("lesson_dictionary.word"), where=left, help=t("lesson_dictionary.word_help"))
    word = PAGE["word"]
    found = lesson.hard_lookup(word, KEYS, values)
    if found is not None:
        right.metric(t("lesson_dictionary.hard_found", word=word.strip().lower()), f(found))
    else:
        right.info(t("lesson_dictionary.hard_missing", word=code(word.strip())), icon=":material/search_off:")
    return values


def weighted_lookup(values: list[float]) -> None:
    """2. Weights given by hand: the seed's 0.6 · 10 + 0.4 · 5 + 0 · 2 = 8."""
    st.subheader(t("lesson_dictionary.weighted_title"))
    st.markdown(t("lesson_dictionary.weighted_body"))
    st.markdown(f"**{t('lesson_dictionary.weights_label')}**")
    for col, key in zip(st.columns(3), KEYS, strict=True):
        number(PAGE, f"w_{key}", f"`{key}`", where=col, step=0.05, format="%.2f")
    weights = [PAGE[f"w_{k}"] for k in KEYS]
    lookup = lesson.weighted_lookup(weights, values)
    terms = " + ".join(rf"{f(w)} \cdot {f(v)}" for w, v in zip(weights, values, strict=True))
    left, right = st.columns([3, 1], vertical_alignment="center")
    left.latex(rf"{latex.words(t('lesson_dictionary.tex_value'))} = {terms} = {f(lookup.total)}")
    right.metric(t("lesson_dictionary.weighted_value"), f(lookup.total))
    if abs(lookup.weight_sum - 1) > 1e-9:
        st.warning(t("lesson_dictionary.weight_sum", total=f(lookup.weight_sum)), icon=":material/balance:")
    else:
        st.caption(t("lesson_dictionary.weight_sum_ok"))


def vector_inputs() -> tuple[list[float], list[list[float]]]:
    """The query and key boxes and the temperature; returns the vectors that can be used."""
    cols = st.columns(4)
    help_text = t("lesson_dictionary.vectors_help")
    text_input(PAGE, "q", t("lesson_dictionary.query_label"), where=cols[0], help=help_text)
    for col, key in zip(cols[1:], KEYS, strict=True):
        text_input(PAGE, f"k_{key}", t("lesson_dictionary.key_label", name=key), where=col, help=help_text)
    slider(PAGE, "temp", t("lesson_dictionary.temperature"), step=0.05, help=t("lesson_dictionary.temperature_help"))
    q = vector("q", t("lesson_dictionary.query_label"), lesson.QUERY_VECTOR)
    keys = [
        vector(f"k_{k}", t("lesson_dictionary.key_label", name=k), d)
        for k, d in zip(KEYS, lesson.KEY_VECTORS, strict=True)
    ]
    mismatch = next(((k, len(v)) for k, v in zip(KEYS, keys, strict=True) if len(v) != len(q)), None)
    if mismatch:
        st.warning(
            t("lesson_dictionary.bad_vector_width", name=mismatch[0], got=mismatch[1], want=len(q)),
            icon=":material/warning:",
        )
        return list(lesson.QUERY_VECTOR), [list(v) for v in lesson.KEY_VECTORS]
    return q, keys


def soft_lookup(values: list[float]) -> None:
    """3. Attention chooses the weights: softmax of scaled dot products, with a temperature."""
    st.subheader(t("lesson_dictionary.attn_title"))
    st.markdown(t("lesson_dictionary.attn_body"))
    latex.show(
        r"w_i = \mathrm{softmax}_i\!\left(\frac{q \cdot k_i}{\sqrt{d_k}\,\tau}\right), \qquad "
        rf"{latex.words(t('lesson_dictionary.tex_value'))} = \sum_i w_i\, v_i"
    )
    q, keys = vector_inputs()
    temp = float(PAGE["temp"])
    soft = lesson.soft_lookup(q, keys, values, temp)
    logits = ", ".join(f(x) for x in soft.logits) if temp > 0 else "—"
    scores = ", ".join(f(s) for s in soft.scores)
    st.caption(t("lesson_dictionary.scores_caption", scores=scores, divisor=f(soft.divisor), logits=logits))
    if temp == 0:
        st.caption(t("lesson_dictionary.hard_limit"))
    terms = " + ".join(rf"{f(w)} \cdot {f(v)}" for w, v in zip(soft.weights, values, strict=True))
    latex.chain(latex.words(t("lesson_dictionary.tex_value")), terms, f(soft.value))
    m1, m2 = st.columns(2)
    m1.metric(t("lesson_dictionary.soft_value"), f(soft.value))
    m2.metric(t("lesson_dictionary.best_key"), KEYS[int(np.argmax(soft.weights))])
    left, right = st.columns(2)
    with left:
        bar = weights_bar(
            KEYS, soft.weights, t("lesson_dictionary.weights_chart"), t("lesson_dictionary.value_word"), values
        )
        chart(bar, key="ldict.weights")
    with right:
        if soft.d_k == 2:
            chart(key_plane(np.array(keys), KEYS, q, "q", t("lesson_dictionary.plane_title")), key="ldict.plane")
        else:
            st.info(t("lesson_dictionary.plane_note", d=soft.d_k), icon=":material/info:")
    # a new visitor's browser draws the weights and the key plane first
    first_screen.rest(lambda: temperature_sweep(q, keys, values, temp))


def temperature_sweep(q: list[float], keys: list[list[float]], values: list[float], temp: float) -> None:
    """Each key's weight as the temperature goes from 0 (hard) to 3 (spread), with the chosen τ marked."""
    temps = lesson.sweep_temperatures(PAGE.params["temp"].hi)
    sweep_w, _ = lesson.temperature_sweep(q, keys, values, temps)
    fig = temperature_figure(
        temps,
        sweep_w,
        KEYS,
        temp,
        t("lesson_dictionary.sweep_title"),
        t("lesson_dictionary.sweep_x"),
        t("lesson_dictionary.sweep_y"),
    )
    chart(fig, key="ldict.sweep")
