"""Translated UI strings: `t("playground.title")` in the language the user picked."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable
from pathlib import Path

import streamlit as st

LANGS = ("en", "zh")
LANG_NAMES = {"en": "English", "zh": "中文"}
LOCALES = Path(__file__).resolve().parents[2] / "locales"
LANG_KEY = "app.lang"  # the session-state key of the language: `state.APP`'s `lang` parameter


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    """Every string of one language, keyed "<file stem>.<key>" (nested tables join with dots)."""
    strings: dict[str, str] = {}

    def flatten(prefix: str, table: dict) -> None:
        for key, value in table.items():
            if isinstance(value, dict):
                flatten(f"{prefix}.{key}", value)
            else:
                strings[f"{prefix}.{key}"] = str(value)

    for path in sorted((LOCALES / lang).glob("*.toml")):
        flatten(path.stem, tomllib.loads(path.read_text(encoding="utf-8")))
    return strings


def lang_for(locale: str | None) -> str:
    """The UI language for a browser's language tag (`navigator.language`): any Chinese (zh, zh-CN, zh-Hant-TW) is
    zh, anything else or nothing is en. Only a link without `lang` asks the browser."""
    tag = (locale or "").strip().lower().replace("_", "-")
    return "zh" if tag == "zh" or tag.startswith("zh-") else "en"


def current_lang() -> str:
    """The language of this session (the sidebar and the `lang` query parameter set it)."""
    lang = st.session_state.get(LANG_KEY, "en")
    return lang if lang in LANGS else "en"


def t(key: str, /, **fmt: object) -> str:
    """The string for `key` in the current language, with `{name}` fields filled from `fmt`."""
    text = catalog(current_lang())[key]
    return text.format(**fmt) if fmt else text


def translator(lang: str) -> Callable[..., str]:
    """`t` fixed to one language, for work that runs outside a script run (a download built on click)."""
    strings = catalog(lang if lang in LANGS else "en")

    def tr(key: str, /, **fmt: object) -> str:
        return strings[key].format(**fmt) if fmt else strings[key]

    return tr
