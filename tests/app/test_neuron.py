"""The Neuron view through AppTest: both languages, the Thinking Machines preset, URL state, the Playground link."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from attnlab.anatomy.neuron import neuron
from attnlab.pipeline import LabConfig, run_lab
from attnlab.testing import app_test
from attnlab.ui.pages.neuron.sections import LAB_SETTINGS_OPEN

from .conftest import assert_clean, open_page, texts

PAGE = "views/neuron.py"


def visit(**query: str) -> AppTest:
    """A visitor of this page's URL with `query`."""
    return open_page(PAGE, **query)


def table(at: AppTest):
    return at.dataframe[0].value


def test_thinking_machines_in_both_languages(lang):
    at = visit(preset="thinking", lang=lang)
    assert_clean(at)
    frame = table(at)
    assert list(frame.iloc[:, 1]) == ["112", "96"] and list(frame.iloc[:, 2]) == ["14", "12"]
    assert list(frame.iloc[:, 4]) == ["0.8808", "0.1192"]
    worked = " ".join(m.value for m in at.markdown)
    assert "**0.88**" in worked and "**0.12**" in worked and "= 8" in worked
    assert len(texts(at, "success")) == 1  # z equals the output row and SDPA's
    assert (
        at.title[0].value
        == {"en": "Neuron view: one query, every number", "zh": "神经元视图：一个查询，每一个数"}[lang]
    )


def test_url_state_traces_the_playground_numbers():
    at = visit(text="I like you", d_model="4", heads="2", causal="true", seed="2", q="1", h="2")
    assert_clean(at)
    steps = run_lab(LabConfig(text="I like you", d_model=4, heads=2, causal=True, seed=2)).steps.heads
    n = neuron(steps.q[1], steps.k[1], steps.v[1], 1, is_causal=True)
    frame = table(at)
    assert list(frame.iloc[:, 1]) == [f"{x:.6g}" for x in n.dots.tolist()]
    assert list(frame.iloc[:, 4]) == [f"{x:.4f}" for x in n.weights.tolist()]
    assert frame.iloc[2, 3] != ""  # "you" comes after "like": masked
    assert at.query_params["q"] == "1" and at.query_params["h"] == "2" and at.query_params["causal"] == "true"
    assert at.session_state["lab.query"] == 1  # the Playground's chips follow the link


def test_bad_url_values_are_named(lang):
    at = visit(q="9", h="5", preset="magic", lang=lang)
    assert_clean(at)
    warnings = texts(at, "warning")
    assert len(warnings) == 3  # preset unknown, query past the end, head past the end
    assert all(any(s in w for s in ("9", "5", "magic")) for w in warnings)
    assert at.query_params["q"] == "5" and at.query_params["h"] == "2" and at.query_params["preset"] == "lab"


def neuron_links(at) -> list:
    """The page links on the page that open the neuron view."""
    return [link for link in at.get("page_link") if link.proto.page == "neuron"]


def test_from_the_playground_chip_to_the_neuron_view():
    at = app_test(60)
    at.run()
    assert not neuron_links(at)  # no token chosen yet, no link (the landing's course invitation is another page's)
    at.pills(key="lab.query").set_value(4)
    at.segmented_control(key="lab.head").set_value(2).run()
    assert len(neuron_links(at)) == 1
    at.switch_page(PAGE).run()
    assert_clean(at)
    assert at.pills(key="lab.query").value == 4 and at.selectbox(key="neuron.h").value == 2
    assert at.query_params["q"] == "4" and at.query_params["h"] == "2"
    at.selectbox(key="neuron.h").set_value(1).run()  # the page's own head choice sticks
    assert at.query_params["h"] == "1"
    at.segmented_control(key="neuron.preset").set_value("thinking").run()
    assert_clean(at)
    assert list(table(at).iloc[:, 1]) == ["112", "96"]


def test_the_playgrounds_settings_are_built_once_opened_and_still_set_what_the_neuron_traces(lang):
    """Folded, the Playground's widgets are not sent (issue 61); opened, the text typed there is the one traced."""
    at = visit(text="I like you", d_model="4", heads="2", lang=lang)
    assert not at.text_input and not at.number_input
    at.session_state[LAB_SETTINGS_OPEN] = True
    at.run()
    at.text_input(key="lab.text").input("the cat sat on the mat").run()
    assert_clean(at)
    assert at.query_params["text"] == "the cat sat on the mat"
    assert at.pills(key="lab.query").options == ["the", "cat", "sat", "on", "the", "mat"]
