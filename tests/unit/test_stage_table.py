"""One stage table: the core's stages and the UI's drawing table have the same names in the same order, and every
reader (the presenter's step k, questions, what-if, the pack, the HTML export) finds the same stage by its name."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attnlab.classroom.build import QUESTION_STAGES, QUESTION_STEPS, questions_for_stage, questions_for_step
from attnlab.classroom.pack import stage_matrices
from attnlab.classroom.questions import Question
from attnlab.classroom.whatif import Change, compare
from attnlab.export_html import formula_html, pack_html, shape_text
from attnlab.pipeline import LabConfig, run_lab
from attnlab.stages import N_STEPS, NAMES, STEPS, by_name, step
from attnlab.ui.app.i18n import LANGS, catalog
from attnlab.ui.pages.present.presenter import on_screen
from attnlab.ui.parts.stages import STAGES

CONFIG = LabConfig(text="<BOS> I like you <EOS>", d_model=8, heads=2, causal=True, seed=3)
EXPECTED = ("x", "q", "k", "v", "scores", "scaled", "masked", "weights", "z", "concat", "output")


@pytest.fixture(scope="module")
def result():
    return run_lab(CONFIG)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal cell for cell, -inf where the other has -inf."""
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def test_the_core_names_eleven_stages_numbered_in_order():
    assert NAMES == EXPECTED and N_STEPS == len(EXPECTED)
    assert [s.number for s in STEPS] == list(range(1, N_STEPS + 1))
    assert all(step(s.number) is s and by_name(s.name) is s for s in STEPS)
    with pytest.raises(KeyError, match="softmax"):
        by_name("softmax")


def test_the_ui_table_has_exactly_the_cores_stages_in_the_cores_order():
    assert tuple(STAGES) == NAMES  # a stage in one table only, or in another place, fails here
    assert all(spec.name == name and spec.step is by_name(name) for name, spec in STAGES.items())


@pytest.mark.parametrize("lang", LANGS)
def test_every_stage_has_its_title_under_its_name_in_both_languages(lang):
    strings = catalog(lang)
    assert [name for name in NAMES if f"stages.{name}" not in strings] == []


@pytest.mark.parametrize("k", range(1, N_STEPS + 1))
def test_the_presenters_step_k_is_the_cores_kth_stage_drawn_by_the_ui_stage_of_that_name(k):
    current, spec = on_screen(k)
    assert current is STEPS[k - 1] and current.name == EXPECTED[k - 1] and spec is STAGES[current.name]


def test_questions_are_asked_before_the_stage_they_name(result):
    assert set(QUESTION_STAGES) <= set(NAMES)
    assert QUESTION_STEPS == {by_name(name).number: qids for name, qids in QUESTION_STAGES.items()}
    for name in NAMES:
        by_step = questions_for_step(by_name(name).number, CONFIG, result)
        by_stage = questions_for_stage(name, CONFIG, result)
        assert [q.uid for q in by_step] == [q.uid for q in by_stage]
        assert all(isinstance(q, Question) and type(q).stage == name for q in by_stage)
    with pytest.raises(KeyError):
        questions_for_stage("softmax", CONFIG, result)


def test_what_if_pairs_each_stage_by_name_with_the_cores_matrix(result):
    what = compare(CONFIG, Change("positions"))
    assert tuple(pair.step.name for pair in what.stages) == NAMES
    for pair in what.stages:
        assert pair.step is by_name(pair.step.name)
        assert same(pair.base, by_name(pair.step.name).matrix(what.base).numpy())
        assert same(pair.base, by_name(pair.step.name).matrix(result).numpy())  # the same state gives the same run


def test_the_pack_names_each_matrix_after_its_stage(result):
    matrices = stage_matrices(result)
    for name in NAMES:
        tensor = by_name(name).matrix(result).numpy()
        if by_name(name).per_head:
            for h, m in enumerate(tensor, start=1):
                assert same(matrices[f"{name}_h{h}"].values, m), (name, h)
        else:
            assert same(matrices[name].values, tensor), name


def test_the_export_writes_each_stage_as_the_presenters_step_of_that_number(result):
    strings = catalog("en")
    page = pack_html(
        CONFIG,
        result,
        app_url="http://localhost:8501/",
        tr=lambda key, **fields: strings[key].format(**fields) if fields else strings[key],
        lang="en",
    )
    sections = re.findall(r'<section id="step-(\d+)">(.*?)</section>', page, flags=re.S)
    assert [int(number) for number, _ in sections] == [by_name(name).number for name in NAMES]
    for name, (_, body) in zip(NAMES, sections, strict=True):
        stage = by_name(name)
        assert formula_html(stage, CONFIG, result) in body and shape_text(stage, result) in body, name
        assert f'id="chart-{stage.number}"' in body, name
