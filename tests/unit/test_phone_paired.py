"""scripts.phone's before-and-after: each checkout's visit against the first's in the same turn, not medians apart."""

from __future__ import annotations

from scripts.phone import paired


def cells(row: str) -> list[str]:
    """A Markdown table row's cells."""
    return [cell.strip() for cell in row.strip("|").split("|")]


def visits(seconds: list[float], cpu: float = 1.0) -> list[dict]:
    """Visits whose first chart and last chart came at these seconds (the last one a second after), `cpu` s each."""
    return [{"first_s": s, "all_s": s + 1.0, "main_thread_cpu_s": cpu} for s in seconds]


def test_each_turn_is_compared_with_its_own_pair_so_a_drifting_machine_cancels_out():
    drift = [2.0, 4.0, 8.0]  # the machine slowed down twice during the run
    base = {"en": {"cross-64": visits(drift)}}
    other = {"en": {"cross-64": visits([0.9 * s for s in drift], cpu=0.8)}}
    head, rule, row = paired(base, other, ["en"])
    assert head == "| page | en: first / all / CPU | turns |" and rule == "| --- | --- | --- |"
    page, measured, turns = cells(row)
    first, last, cpu = measured.split(" / ")
    assert first == "0.90 (0.90-0.90)"  # every turn says 0.90, however fast the machine was during it
    assert last.startswith("0.92 (0.91-0.93)")  # (0.9 s + 1) / (s + 1), per turn
    assert cpu == "0.80 (0.80-0.80)"
    assert (page, turns) == ("cross-64", "3")


def test_a_turn_with_a_failed_visit_is_left_out_and_the_turns_counted_per_language():
    base = {lang: {"multihead-64": visits([2.0, 2.0])} for lang in ("en", "zh")}
    other = {lang: {"multihead-64": visits([3.0, 1.0])} for lang in ("en", "zh")}
    other["zh"]["multihead-64"][0] = {"failed": "TimeoutError: the page never settled"}
    row = paired(base, other, ["en", "zh"])[2]
    _, en, zh, turns = cells(row)
    assert en.startswith("1.00 (0.50-1.50)") and zh.startswith("0.50 (0.50-0.50)")
    assert turns == "2/1"
