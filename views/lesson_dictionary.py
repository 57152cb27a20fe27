"""Lesson: the soft dictionary. A hard lookup, a hand-weighted lookup (0.6·10 + 0.4·5 + 0·2 = 8), then
weights from softmax(q·k / (sqrt(d_k)·τ)) with a temperature that turns the soft lookup back into a hard one."""

import numpy as np
import streamlit as st

from attnlab.figures_lessons import key_plane, temperature_figure, weights_bar
from attnlab.lessons import dictionary as lesson
from attnlab.lessons.parse import dump_float, dump_vector, float_in, parse_vector
from attnlab.params import Param, text
from attnlab.ui import state
from attnlab.ui.i18n import t
from attnlab.ui.widgets import chart, md_escape

SCOPE = "ldict"
KEYS = lesson.KEYS
PARAMS = (
    Param("word", "apple", text(40)),
    *(Param(f"v_{k}", v, float_in(-1000, 1000, v), dump_float) for k, v in zip(KEYS, lesson.VALUES, strict=True)),
    *(Param(f"w_{k}", w, float_in(0, 1, w), dump_float) for k, w in zip(KEYS, lesson.FRUIT_WEIGHTS, strict=True)),
    Param("q", dump_vector(list(lesson.QUERY_VECTOR)), text(200)),
    *(Param(f"k_{k}", dump_vector(list(v)), text(200)) for k, v in zip(KEYS, lesson.KEY_VECTORS, strict=True)),
    Param("temp", 1.0, float_in(0, 3, 1.0), dump_float),
)
K = {p.name: state.key(SCOPE, p.name) for p in PARAMS}


def f(x: float) -> str:
    """A number as the page prints it: 0.6, 10, 7.234."""
    return dump_float(round(float(x), 4))


def vector(name: str, shown: str, default: tuple[float, ...]) -> list[float]:
    """The vector typed into one box, or the default with a warning that keeps what was typed."""
    raw = st.session_state[K[name]]
    try:
        return parse_vector(raw)
    except ValueError as bad:
        used = dump_vector(list(default))
        st.warning(
            t(f"lesson_dictionary.bad_vector_{bad}", name=shown, raw=md_escape(raw), used=used),
            icon=":material/warning:",
        )
        return list(default)


state.load(SCOPE, PARAMS)
st.title(t("lesson_dictionary.title"))
st.caption(t("lesson_dictionary.intro"))
state.show_problems(SCOPE)

# 1. hard dictionary ---------------------------------------------------------------------------------
st.subheader(t("lesson_dictionary.hard_title"))
st.markdown(t("lesson_dictionary.hard_body"))
st.markdown(f"**{t('lesson_dictionary.values_label')}**")
cols = st.columns(3)
for col, key in zip(cols, KEYS, strict=True):
    col.number_input(
        f"`{key}`", min_value=-1000.0, max_value=1000.0, step=1.0, key=K[f"v_{key}"], persist_state="session"
    )
values = [st.session_state[K[f"v_{k}"]] for k in KEYS]
st.code("{" + ", ".join(f'"{k}": {f(v)}' for k, v in zip(KEYS, values, strict=True)) + "}", language="json")
left, right = st.columns([2, 3], vertical_alignment="bottom")
left.text_input(
    t("lesson_dictionary.word"), key=K["word"], help=t("lesson_dictionary.word_help"), persist_state="session"
)
word = st.session_state[K["word"]]
found = lesson.hard_lookup(word, KEYS, values)
if found is not None:
    right.metric(t("lesson_dictionary.hard_found", word=word.strip().lower()), f(found))
else:
    right.info(t("lesson_dictionary.hard_missing", word=md_escape(word.strip())), icon=":material/search_off:")

# 2. weighted lookup ---------------------------------------------------------------------------------
st.subheader(t("lesson_dictionary.weighted_title"))
st.markdown(t("lesson_dictionary.weighted_body"))
st.markdown(f"**{t('lesson_dictionary.weights_label')}**")
cols = st.columns(3)
for col, key in zip(cols, KEYS, strict=True):
    col.number_input(
        f"`{key}`", min_value=0.0, max_value=1.0, step=0.05, key=K[f"w_{key}"], format="%.2f", persist_state="session"
    )
weights = [st.session_state[K[f"w_{k}"]] for k in KEYS]
lookup = lesson.weighted_lookup(weights, values)
terms = " + ".join(rf"{f(w)} \cdot {f(v)}" for w, v in zip(weights, values, strict=True))
left, right = st.columns([3, 1], vertical_alignment="center")
left.latex(rf"\text{{value}} = {terms} = {f(lookup.total)}")
right.metric(t("lesson_dictionary.weighted_value"), f(lookup.total))
if abs(lookup.weight_sum - 1) > 1e-9:
    st.warning(t("lesson_dictionary.weight_sum", total=f(lookup.weight_sum)), icon=":material/balance:")
else:
    st.caption(t("lesson_dictionary.weight_sum_ok"))

# 3. attention chooses the weights -------------------------------------------------------------------
st.subheader(t("lesson_dictionary.attn_title"))
st.markdown(t("lesson_dictionary.attn_body"))
st.latex(
    r"w_i = \mathrm{softmax}_i\!\left(\frac{q \cdot k_i}{\sqrt{d_k}\,\tau}\right), \qquad "
    r"\text{value} = \sum_i w_i\, v_i"
)
cols = st.columns(4)
cols[0].text_input(
    t("lesson_dictionary.query_label"), key=K["q"], help=t("lesson_dictionary.vectors_help"), persist_state="session"
)
for col, key in zip(cols[1:], KEYS, strict=True):
    col.text_input(
        t("lesson_dictionary.key_label", name=key),
        key=K[f"k_{key}"],
        help=t("lesson_dictionary.vectors_help"),
        persist_state="session",
    )
st.slider(
    t("lesson_dictionary.temperature"),
    0.0,
    3.0,
    step=0.05,
    key=K["temp"],
    help=t("lesson_dictionary.temperature_help"),
    persist_state="session",
)
state.save(SCOPE, PARAMS)

q = vector("q", t("lesson_dictionary.query_label"), lesson.QUERY_VECTOR)
keys = [
    vector(f"k_{k}", t("lesson_dictionary.key_label", name=k), d) for k, d in zip(KEYS, lesson.KEY_VECTORS, strict=True)
]
mismatch = next(((k, len(v)) for k, v in zip(KEYS, keys, strict=True) if len(v) != len(q)), None)
if mismatch:
    st.warning(
        t("lesson_dictionary.bad_vector_width", name=mismatch[0], got=mismatch[1], want=len(q)),
        icon=":material/warning:",
    )
    q, keys = list(lesson.QUERY_VECTOR), [list(v) for v in lesson.KEY_VECTORS]
temp = float(st.session_state[K["temp"]])
soft = lesson.soft_lookup(q, keys, values, temp)
divisor = float(np.sqrt(soft.d_k) * temp)
st.caption(
    t(
        "lesson_dictionary.scores_caption",
        scores=", ".join(f(s) for s in soft.scores),
        divisor=f(divisor),
        logits=", ".join(f(x) for x in soft.logits) if temp > 0 else "—",
    )
)
if temp == 0:
    st.caption(t("lesson_dictionary.hard_limit"))
terms = " + ".join(rf"{f(w)} \cdot {f(v)}" for w, v in zip(soft.weights, values, strict=True))
st.latex(rf"\text{{value}} = {terms} = {f(soft.value)}")
m1, m2 = st.columns(2)
m1.metric(t("lesson_dictionary.soft_value"), f(soft.value))
m2.metric(t("lesson_dictionary.best_key"), KEYS[int(np.argmax(soft.weights))])
left, right = st.columns(2)
with left:
    chart(
        weights_bar(
            KEYS, soft.weights, t("lesson_dictionary.weights_chart"), t("lesson_dictionary.value_word"), values
        ),
        key="ldict.weights",
    )
with right:
    if soft.d_k == 2:
        chart(key_plane(np.array(keys), KEYS, q, "q", t("lesson_dictionary.plane_title")), key="ldict.plane")
    else:
        st.info(t("lesson_dictionary.plane_note", d=soft.d_k), icon=":material/info:")
temps = np.round(np.linspace(0.0, 3.0, 61), 3)
sweep_w, _ = lesson.temperature_sweep(q, keys, values, temps)
chart(
    temperature_figure(
        temps,
        sweep_w,
        KEYS,
        temp,
        t("lesson_dictionary.sweep_title"),
        t("lesson_dictionary.sweep_x"),
        t("lesson_dictionary.sweep_y"),
    ),
    key="ldict.sweep",
)
