"""Display formulas that fit a phone's column: one part a line where the parts side by side would not fit.

KaTeX never wraps a display formula. On a 390-px phone the main column is 358 px wide, and a formula of two parts
side by side (the softmax and its row maximum, both of RoPE's definitions, the two sinusoids) runs 400 to 600 px:
Streamlit scrolls it inside its own box, so a student saw it cut at the column's edge, the rest only a sideways swipe
away. Below `STACK_BELOW_PX` (the charts' band, `figures.screen`, which the page's probe reports) a formula is
written again as lines: it is cut where the formula itself leaves room between its parts (`\\quad` or `\\qquad`) or
allows a break (`\\allowbreak`, nothing on a wide column), outside every group, environment and `\\left ... \\right`;
a lone connective ("but", ⟹) starts the line after it, and the lines are centred one under another (`gathered`). An
equation chain (`chain`) puts each "=" at the start of its own line, aligned. A formula with no such room is left as
it is (and still scrolls where it must).
"""

from __future__ import annotations

import re

import streamlit as st

from attnlab.figures import screen

STACK_BELOW_PX = 640  # bands under this stack a formula's parts: the widest side-by-side formula is about 600 px
CUTS = ("quad", "qquad", "allowbreak")  # where a formula's parts meet: its spaces, or a break it allows
# a word or an arrow between two parts ("but", "但", ⟹), as opposed to a part of its own written in words
CONNECTIVE = re.compile(
    r"^(\\text\{\s*([A-Za-z]{1,8}|[\u4e00-\u9fff]{1,4})\s*\}|\\(Longrightarrow|Rightarrow|implies|iff|Longleftrightarrow))$"
)


def parts(tex: str) -> list[str]:
    """The formula cut at every `\\quad`, `\\qquad` or `\\allowbreak` outside any group, environment or `\\left ...
    \\right`."""
    out, start, depth, i = [], 0, 0, 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            name = re.match(r"[A-Za-z]+|.", tex[i + 1 :])
            word = name.group(0) if name else ""
            if word in ("begin", "left"):
                depth += 1
            elif word in ("end", "right"):
                depth -= 1
            elif word in CUTS and depth == 0:
                out.append(tex[start:i])
                start = i + 1 + len(word)
            i += 1 + len(word)
            continue
        depth += (c == "{") - (c == "}")
        i += 1
    out.append(tex[start:])
    return [p.strip() for p in out if p.strip()]


def lines(tex: str) -> list[str]:
    """The formula's parts, a lone connective joined to the part after it (so no line says only "but")."""
    out: list[str] = []
    carry = ""
    for part in parts(tex):
        if CONNECTIVE.match(part):
            carry += part + r"\ "
        else:
            out.append(carry + part)
            carry = ""
    if carry:
        out.append(carry.removesuffix(r"\ "))
    return out


TEX_SPECIAL = re.compile(r"[\\{}$&#^_%~]")  # what TeX would read as a command, a group or a mark, not a letter


def words(text: str) -> str:
    """`text` as words inside a formula (`\\text{...}`), its TeX characters dropped: formulas carry words from the
    reader's locale ("值", "缓存"), text TeX would otherwise read as commands."""
    return r"\text{" + TEX_SPECIAL.sub("", text) + "}"


def stacked(tex: str) -> str:
    """The formula as centred lines, one part each; a formula of one part is returned unchanged."""
    found = lines(tex)
    if len(found) < 2:
        return tex
    return r"\begin{gathered}" + r" \\ ".join(found) + r"\end{gathered}"


def narrow() -> bool:
    """Whether this run's column is too narrow for a formula's parts side by side."""
    return screen.width() < STACK_BELOW_PX


def show(tex: str) -> None:
    """A display formula: as written on a wide column, its parts stacked on a narrow one."""
    st.latex(stacked(tex) if narrow() else tex)


def chain_tex(terms: list[str], stack: bool) -> str:
    """`a = b = c`, or on a narrow column `a` then each `= b` on a line of its own, the signs aligned."""
    if not stack or len(terms) < 3:
        return " = ".join(terms)
    return r"\begin{aligned}" + terms[0] + r" &= " + r" \\ &= ".join(terms[1:]) + r"\end{aligned}"


def chain(*terms: str) -> None:
    """An equation chain whose every term is equal: on one line, or one "=" a line on a narrow column."""
    st.latex(chain_tex(list(terms), narrow()))
