"""Which heads are on screen: heads drawn side by side in groups small enough to draw quickly, and their picker."""

from __future__ import annotations

from attnlab.limits import MAX_HEAD_PANELS, MAX_PANEL_CELLS
from attnlab.ui.app.i18n import t
from attnlab.ui.app.state import PageState
from attnlab.ui.app.widgets import segmented, selectbox


def panels_per_view(t_len: int = 0) -> int:
    """How many (T, T) panels one chart shows side by side: fewer for long texts, so every view draws quickly."""
    return max(1, min(MAX_HEAD_PANELS, MAX_PANEL_CELLS // max(1, t_len * t_len)))


def head_groups(n_heads: int, t_len: int = 0) -> list[tuple[int, ...]]:
    """Heads in groups drawn side by side one group at a time."""
    size = panels_per_view(t_len)
    return [tuple(range(lo, min(lo + size, n_heads))) for lo in range(0, n_heads, size)]


def head_options(n_heads: int, t_len: int = 0) -> dict[int, str]:
    """The head picker's choices: 0 = all heads (or -g = group g when there are many), h = head h alone."""
    groups = head_groups(n_heads, t_len)
    if len(groups) == 1:
        several = {0: t("stages.all_heads")}
    else:
        several = {-g: t("stages.head_group", lo=hs[0] + 1, hi=hs[-1] + 1, n=n_heads) for g, hs in enumerate(groups)}
    return several | {h: t("lab.check_head", h=h) for h in range(1, n_heads + 1)}


def shown_heads(choice: int, n_heads: int, t_len: int = 0) -> tuple[int, ...]:
    """The heads a picker choice shows: a group for 0 or a negative choice, one head for h >= 1."""
    if choice >= 1:
        return (choice - 1,)
    return head_groups(n_heads, t_len)[-choice]


def head_picker(page: PageState, name: str, n_heads: int, t_len: int = 0, **kw) -> tuple[int, ...]:
    """Choose the heads on screen (buttons when the choices are few, a dropdown for many); returns them."""
    labels = head_options(n_heads, t_len)
    if page[name] not in labels:
        page[name] = 0
    widget = segmented if len(labels) <= MAX_HEAD_PANELS + 1 else selectbox
    widget(page, name, t("stages.view"), options=list(labels), labels=labels, **kw)
    return shown_heads(page[name], n_heads, t_len)
