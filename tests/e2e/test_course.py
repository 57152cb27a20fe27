"""The course in a real browser (contract 17): three tasks answered on a 390-px phone in Chinese, three at 1280 x 720.

Each task is answered with what the page computes for the address bar's state at that moment, so the test reads
the numbers the way a student does and holds the panel to them; Next opens the following task's page.
"""

from __future__ import annotations

import urllib.parse

import pytest

from attnlab import course
from attnlab.ui.app.i18n import catalog
from tests.e2e.conftest import no_exception, open_app, rerun, settle

pytestmark = pytest.mark.e2e

PANEL = ".st-key-course_panel"
PHONE_BAND = 340  # the band a 390-px phone's main column reports (`figures.screen.BANDS`)


def link_state(tab) -> dict[str, str]:
    """The address bar's query: the state the panel grades on."""
    return dict(urllib.parse.parse_qsl(urllib.parse.urlparse(tab.url).query))


def answer(tab, task_id: str, lang: str, typed: str | None = None) -> None:
    """Type the task's answer for the page as it stands (or `typed`) and wait for the panel's verdict."""
    task = course.by_id(lang)[task_id]
    box = tab.locator(f"{PANEL} .st-key-course_answer input")
    box.fill(typed if typed is not None else task.expected(link_state(tab)))
    rerun(tab, lambda: box.press("Enter"))


def right(tab) -> bool:
    """The panel says the answer is right."""
    return tab.locator(f'{PANEL} [data-testid="stAlertContentSuccess"]').count() == 1


def next_task(tab, lang: str) -> None:
    """Follow the panel's Next link and wait for the next task's page to settle."""
    label = catalog(lang)["course.panel.next"].split("{")[0]
    link = tab.locator(f'{PANEL} [data-testid="stPageLink"] a').filter(has_text=label)
    rerun(tab, link.click)
    settle(tab)


def test_three_tasks_answered_on_a_phone_in_chinese_above_the_page(page, server):
    page.set_viewport_size({"width": 390, "height": 844})
    open_app(page, server, "/soft-dictionary?lang=zh&task=dict-weighted")
    page.wait_for_function(f"() => document.body.dataset.attnlabBand === '{PHONE_BAND}'")  # the phone's width known
    page.locator(f'[data-testid="stMain"] {PANEL}').wait_for()  # the run that width asked for moved the panel
    settle(page)
    panel, title = page.locator(PANEL), page.locator("h1").first
    assert panel.is_visible() and panel.bounding_box()["y"] < title.bounding_box()["y"]  # above the page
    assert page.locator(f'[data-testid="stSidebar"] {PANEL}').count() == 0
    assert course.by_id("zh")["dict-weighted"].prompt in panel.inner_text()
    answer(page, "dict-weighted", "zh", "８")  # a full-width digit, as a Chinese keyboard types it
    assert right(page) and link_state(page)["done"] == "dict-weighted"
    next_task(page, "zh")
    assert "task=dict-temperature" in page.url and course.by_id("zh")["dict-temperature"].prompt in panel.inner_text()
    assert page.locator(f"{PANEL} .st-key-course_answer input").input_value() == ""  # a new task, an empty box
    answer(page, "dict-temperature", "zh")
    assert right(page)
    next_task(page, "zh")
    answer(page, "scaling-variance", "zh", "64")  # the theory counts within 10 % of the measured variance
    assert right(page) and no_exception(page)
    assert link_state(page)["done"] == "dict-weighted,dict-temperature,scaling-variance"


@pytest.mark.slow
def test_three_tasks_at_1280_by_720_with_the_panel_in_the_sidebar_and_the_page_live(page, server):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_app(page, server, "/masking?lang=en&task=masking-weight")
    assert page.locator(f'[data-testid="stSidebar"] {PANEL}').is_visible()
    answer(page, "masking-weight", "en")
    assert right(page)
    next_task(page, "en")
    assert "task=masking-row" in page.url
    answer(page, "masking-row", "en", "C")  # float16 cannot hold -1e9: masked_fill refuses it
    assert right(page)
    rerun(page, page.get_by_text("float32", exact=True).first.click)  # the page's own control, with the panel open
    assert not right(page)  # the same answer, graded on the new numbers: now an even spread
    answer(page, "masking-row", "en", "B")
    assert right(page)
    rerun(page, page.locator(f'{PANEL} [data-testid="stPageLink"] a').filter(has_text="All tasks").click)
    settle(page)
    assert "/course" in page.url and "2 of 20 tasks done" in page.inner_text("body")
    rerun(page, page.get_by_text("Open task 19", exact=True).click)
    settle(page)
    assert "/kv-cache" in page.url and page.locator(f'[data-testid="stSidebar"] {PANEL}').is_visible()
    answer(page, "kv-per-token", "en", "131 kB")  # as the page prints it, read as 131,000 bytes: within 0.5 %
    assert right(page) and no_exception(page)
    assert link_state(page)["done"] == "masking-weight,masking-row,kv-per-token"
