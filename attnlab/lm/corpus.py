"""The two training corpora, read from Debian packages by name: cleaned, split into documents, held-out set fixed.

Chinese, `fortunes-zh`: tang300 (唐诗三百首), song100 (宋词一百首) and the `chinese` collection, UTF-8 fortune files
(the `.u8` names are links to the same files) with ANSI colour codes. A poem's body lines are joined into one line,
so a regular 5- or 7-character poem repeats with period 6 or 8 (each clause and its punctuation). From `chinese`
only the documents without Latin letters are kept: the classical quotations, proverbs and poems; its modern
documents (the Debian reference manual, Debian's code of conduct, in translation) go.
English, `bible-kjv`: the King James Bible through its `bible` command (`bible -f Gen1:1-Rev22:21`: one verse a
line after its reference), one document per chapter, verses one a line, references dropped.
The held-out set is every HELD_OUT_EVERY-th document (offset HELD_OUT_AT) in the packages' order: whole poems,
quotations or chapters, never seen in training.
Licences: the texts are public domain (Tang and Song poems and classical sayings over 700 years old; the King
James text's copyright has expired, as bible-kjv's copyright file says), the packages' own files are GPL (fortunes-zh
GPL-3.0+, bible-kjv GPL-2+). So the repository ships no corpus and no package file: only short excerpts of the
public-domain texts as tests' data, and the metrics' passages. Each run's metrics.json names every source's package,
version and licence as read from dpkg and /usr/share/doc/<package>/copyright on the machine that built it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

FORTUNES = Path("/usr/share/games/fortunes")
ZH_FILES = ("tang300", "song100", "chinese")
ZH_POEM_FILES = ("tang300", "song100")  # files of poems: title, author, body lines
KJV_RANGE = "Gen1:1-Rev22:21"  # the whole text, as bible(1) documents
HELD_OUT_EVERY, HELD_OUT_AT = 20, 10
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LATIN = re.compile(r"[A-Za-z]")
VERSE = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")
PUNCT = "，。？！；、"
DOC_SEP = "\n\n"  # documents are laid one after another with a blank line between them
ZH_TEXT = "public domain: Tang and Song poems and classical sayings; the collection's modern entries are left out"
EN_TEXT = "public domain: the King James Version of 1611 (copyright expired; UK printing under Crown letters patent)"


@dataclass
class Corpus:
    """One language's documents, split; `sources` gives each source's package, version and licence."""

    lang: str
    train: list[str]
    held_out: list[str]
    sources: list[dict] = field(default_factory=list)

    def text(self, split: str = "train") -> str:
        """The split's documents as one stream, a blank line between two documents."""
        return DOC_SEP.join(self.train if split == "train" else self.held_out)


def package(name: str) -> dict:
    """A package's name, version (dpkg-query) and licence (read from its copyright file)."""
    version = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True, check=True
    ).stdout.strip()
    return {"package": name, "version": version, "licence": licence(Path(f"/usr/share/doc/{name}/copyright"))}


def licence(path: Path) -> str:
    """The licences a copyright file states: DEP-5's `License:` fields, else its sentences on copyright's expiry."""
    text = path.read_text(encoding="utf-8", errors="replace")
    fields = list(dict.fromkeys(m.strip() for m in re.findall(r"^License:\s*(\S.*)$", text, re.M)))
    if fields:
        return ", ".join(fields)
    words = " ".join(text.split())
    found = re.findall(r"[^.]*(?:expired|public domain|[Ll]icen[cs]e is [^.]*)[^.]*\.", words)
    return " ".join(dict.fromkeys(s.strip() for s in found))


def strip_ansi(text: str) -> str:
    """Colour codes out, no-break spaces made plain spaces."""
    return ANSI.sub("", text).replace("\xa0", " ")


def fortune_docs(text: str) -> list[str]:
    """A fortune file's entries ('%' lines between them), each line stripped, blank runs made one, empty dropped."""
    docs = []
    for raw in re.split(r"^%$", strip_ansi(text), flags=re.M):
        lines = [line.strip() for line in raw.strip("\n").split("\n")]
        doc = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
        if doc:
            docs.append(doc)
    return docs


def join_poem(doc: str) -> str:
    """Title and author lines as they are, the body's lines joined into one (a regular poem then has one period)."""
    lines = doc.split("\n")
    head = next((i + 1 for i, line in enumerate(lines[:3]) if line.startswith("作者")), 0)
    body = "".join(line for line in lines[head:] if line)
    return "\n".join([*lines[:head], body]) if body else "\n".join(lines[:head])


def zh_docs(name: str, text: str) -> list[str]:
    """One fortunes-zh file's cleaned documents."""
    docs = fortune_docs(text)
    if name in ZH_POEM_FILES:
        return [join_poem(d) for d in docs]
    return [d for d in docs if not LATIN.search(d)]


def kjv_docs(text: str) -> list[str]:
    """`bible -f` output as chapters: verses one a line, references dropped, in the Bible's order."""
    chapters: dict[tuple[str, str], list[str]] = {}
    for line in text.splitlines():
        m = VERSE.match(line.strip())
        if m:
            chapters.setdefault((m[1], m[2]), []).append(" ".join(m[4].split()))
    return ["\n".join(verses) for verses in chapters.values()]


def split(docs: list[str]) -> tuple[list[str], list[str]]:
    """Training and held-out documents: every HELD_OUT_EVERY-th one (from HELD_OUT_AT) is held out."""
    held = [d for i, d in enumerate(docs) if i % HELD_OUT_EVERY == HELD_OUT_AT]
    train = [d for i, d in enumerate(docs) if i % HELD_OUT_EVERY != HELD_OUT_AT]
    return train, held


def regular_poems(docs: list[str], lengths: tuple[int, ...] = (5, 7), clauses: int = 4) -> list[tuple[str, int]]:
    """Bodies of regular poems (every clause n characters and one punctuation mark, at least `clauses` of them),
    each with its period n + 1."""
    found = []
    for doc in docs:
        body = doc.split("\n")[-1]
        for n in lengths:
            if re.fullmatch(rf"(?:[^{PUNCT}\s]{{{n}}}[{PUNCT}]){{{clauses},}}", body):
                found.append((body, n + 1))
    return found


def build_zh(root: Path = FORTUNES) -> Corpus:
    """The Chinese corpus from fortunes-zh's files."""
    docs = []
    for name in ZH_FILES:
        docs += zh_docs(name, (root / name).read_text(encoding="utf-8"))
    train, held = split(docs)
    files = [f"{root}/{n}" for n in ZH_FILES]
    return Corpus("zh", train, held, [{**package("fortunes-zh"), "files": files, "text_licence": ZH_TEXT}])


def build_en() -> Corpus:
    """The English corpus from bible-kjv's `bible` command."""
    if shutil.which("bible") is None:
        raise FileNotFoundError("the bible command is missing: apt-get install bible-kjv")
    raw = subprocess.run(["bible", "-f", KJV_RANGE], capture_output=True, text=True, check=True).stdout
    train, held = split(kjv_docs(raw))
    command = {"command": f"bible -f {KJV_RANGE}", "text_licence": EN_TEXT}
    return Corpus("en", train, held, [{**package("bible-kjv"), **command}, {**package("bible-kjv-text"), **command}])


BUILDERS = {"zh": build_zh, "en": build_en}


def build(lang: str) -> Corpus:
    """A language's corpus from the installed packages (FileNotFoundError where they are not installed)."""
    return BUILDERS[lang]()
