"""Display formulas on a phone's column: cut where the formula leaves room between its parts, never inside a part."""

from __future__ import annotations

import pytest

from attnlab.figures import screen
from attnlab.ui.app import latex
from attnlab.ui.pages.tiled.sections import update_formula

CASES = [
    (  # the weights stage: the row maximum stays beside the fraction it belongs to
        r"A = \mathrm{softmax}(S'') ,\quad A_{ij} = \frac{e^{S''_{ij} - m_i}}{\sum_{j'} e^{S''_{ij'} - m_i}},\ m_i = "
        r"\max_j S''_{ij}",
        [
            r"A = \mathrm{softmax}(S'') ,",
            r"A_{ij} = \frac{e^{S''_{ij} - m_i}}{\sum_{j'} e^{S''_{ij'} - m_i}},\ m_i = "
            r"\max_j S''_{ij}",
        ],
    ),
    (  # a connective starts the line after it
        r"\mathrm{Attn}(P X) = P\,\mathrm{Attn}(X) \quad\text{but}\quad "
        r"\mathrm{Attn}(P X + E) \neq P\,\mathrm{Attn}(X)",
        [r"\mathrm{Attn}(P X) = P\,\mathrm{Attn}(X)", r"\text{but}\ \mathrm{Attn}(P X + E) \neq P\,\mathrm{Attn}(X)"],
    ),
    (
        r"\text{time} \propto T^2 d, \qquad \text{memory} \propto T^2 \quad\Longrightarrow\quad \log y = a + 2 \log T",
        [r"\text{time} \propto T^2 d,", r"\text{memory} \propto T^2", r"\Longrightarrow\ \log y = a + 2 \log T"],
    ),
    (  # a space inside cases, a group or \left ... \right is not a place to cut
        r"M_{ij} = \begin{cases} 0 \quad & j \le i \\ -\infty & j > i \end{cases}, \qquad "
        r"A = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} \quad + M\right) {x \qquad y}",
        [
            r"M_{ij} = \begin{cases} 0 \quad & j \le i \\ -\infty & j > i \end{cases},",
            r"A = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} \quad + M\right) {x \qquad y}",
        ],
    ),
    (r"X = E_{\mathrm{symbol}} + E_{\mathrm{position}}", [r"X = E_{\mathrm{symbol}} + E_{\mathrm{position}}"]),
    (r"a \quadrant b\quad", [r"a \quadrant b"]),  # \quadrant is not \quad
    (r"\texttt{f(a,} \allowbreak \texttt{b)} = c", [r"\texttt{f(a,}", r"\texttt{b)} = c"]),  # a break allowed
    (r"\text{cache per token} \allowbreak = 2", [r"\text{cache per token}", "= 2"]),  # words, not a connective
    (r"a = b \quad\text{但}\quad c \neq d", [r"a = b", r"\text{但}\ c \neq d"]),  # in Chinese too
]


@pytest.mark.parametrize(("tex", "lines"), CASES)
def test_a_formula_is_cut_only_between_its_parts(tex, lines):
    assert latex.lines(tex) == lines


def test_the_tiled_update_is_one_equation_a_line_when_narrow_and_two_when_wide():
    assert update_formula(narrow=True).count(r"\\") == 3 and update_formula(narrow=False).count(r"\\") == 1


def test_stacked_lines_are_centred_one_under_another_and_one_part_is_left_alone():
    tex = CASES[0][0]
    assert latex.stacked(tex) == r"\begin{gathered}" + r" \\ ".join(CASES[0][1]) + r"\end{gathered}"
    assert latex.stacked(CASES[4][0]) == CASES[4][0]


def test_a_chain_puts_each_equals_sign_on_a_line_of_its_own_only_when_narrow():
    assert latex.chain_tex(["a", "b", "c"], stack=False) == "a = b = c"
    assert latex.chain_tex(["a", "b", "c"], stack=True) == r"\begin{aligned}a &= b \\ &= c\end{aligned}"
    assert latex.chain_tex(["a", "b"], stack=True) == "a = b"  # one sign: nothing to stack


@pytest.mark.parametrize(("band", "narrow"), [(300, True), (340, True), (480, True), (640, False), (800, False)])
def test_phones_and_small_tablets_stack_and_wider_columns_do_not(band, narrow):
    with screen.at(band):
        assert latex.narrow() is narrow


def test_words_from_a_catalogue_go_into_a_formula_as_text_whatever_characters_they_hold():
    assert latex.words("值") == r"\text{值}"
    assert latex.words("bytes/token") == r"\text{bytes/token}"
    assert latex.words(r"a_b {c} 50% \x ~ ^ $ & #") == r"\text{ab c 50 x     }"  # nothing TeX reads as markup
