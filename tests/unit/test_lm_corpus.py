"""The corpus builder on the shipped excerpts (tests/data/lm): colour codes, poems, chapters, the held-out split.

CI machines do not have fortunes-zh or bible-kjv; these tests read the excerpts only, and the one test that reads the
installed packages skips where they are missing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from attnlab.lm import corpus

DATA = Path(__file__).resolve().parents[1] / "data" / "lm"
MODERN = "\x1b[32m2. 什么是 Debian\x1b[m\n\n    Debian 是一个自由的操作系统。\n"  # written here: a modern entry


def test_fortune_entries_lose_their_colour_codes_and_poems_join_their_body():
    docs = corpus.zh_docs("tang300", (DATA / "tang300").read_text(encoding="utf-8"))
    assert len(docs) == 7 and not any("\x1b" in d for d in docs)
    title, author, body = docs[0].split("\n")
    assert title == "《感遇・其一》" and author == "作者：张九龄"
    assert body == "兰叶春葳蕤，桂华秋皎洁。欣欣此生意，自尔为佳节。谁知林栖者，闻风坐相悦。草木有本心，何求美人折？"


def test_regular_poems_are_found_with_their_period():
    docs = corpus.zh_docs("tang300", (DATA / "tang300").read_text(encoding="utf-8"))
    periods = sorted(p for _, p in corpus.regular_poems(docs))
    assert periods == [6, 6, 6, 8, 8, 8]  # three of five characters, three of seven; the seventh is irregular
    assert corpus.regular_poems(["t\n作者：x\n一二三四五，一二三四五。一二三四，一二三四五。"]) == []


def test_the_collection_keeps_its_classical_entries_and_drops_modern_ones():
    text = (DATA / "chinese").read_text(encoding="utf-8") + "%\n" + MODERN
    docs = corpus.zh_docs("chinese", text)
    assert len(docs) == 4 and all(d.startswith("子曰") for d in docs)
    assert docs[0].endswith("-- 论语，为政篇") and "\xa0" not in "".join(docs)
    assert corpus.zh_docs("song100", (DATA / "song100").read_text(encoding="utf-8"))[0].startswith("题目:《塞上》")


def test_the_bible_becomes_one_document_per_chapter_without_references():
    chapters = corpus.kjv_docs((DATA / "kjv.txt").read_text(encoding="utf-8"))
    assert len(chapters) == 4 and chapters[-1] == "Jesus wept."
    assert chapters[0].split("\n")[0] == "In the beginning God created the heaven and the earth."
    assert len(chapters[0].split("\n")) == 31 and not any(c[0].isdigit() for c in chapters)


def test_the_held_out_split_is_fixed_whole_documents():
    docs = [f"doc {i}" for i in range(45)]
    train, held = corpus.split(docs)
    assert held == ["doc 10", "doc 30"] and len(train) == 43 and not set(train) & set(held)
    assert corpus.Corpus("x", ["a", "b"], ["c"]).text() == "a\n\nb"


def test_licences_are_read_from_machine_readable_and_free_form_copyright_files(tmp_path):
    dep5 = tmp_path / "dep5"
    dep5.write_text(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nLicense: GPL-3.0+\n"
    )
    assert corpus.licence(dep5) == "GPL-3.0+"
    free = tmp_path / "free"
    free.write_text("The copyright for the text\n is expired since 1611. Its licence is GPL version 2 or later.\n")
    assert (
        corpus.licence(free)
        == "The copyright for the text is expired since 1611. Its licence is GPL version 2 or later."
    )


@pytest.mark.skipif(
    shutil.which("bible") is None or not corpus.FORTUNES.is_dir(), reason="the Debian packages are not installed"
)
def test_the_installed_packages_give_both_corpora_with_their_sources():
    for lang in ("zh", "en"):
        c = corpus.build(lang)
        assert len(c.held_out) * 15 < len(c.train) and all(s["version"] and s["licence"] for s in c.sources)
