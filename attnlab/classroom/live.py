"""A live class (contract 18): a teacher's presenter, students on their phones, one store holding the class between.

`open_store(url)` picks the store from a URL, or from `ATTNLAB_CLASS_STORE` when `url` is None:

- unset or empty: the embedded default, an SQLite file in the server's temporary folder (works on Community Cloud
  with no setting; the processes of one machine share it);
- `sqlite:///PATH`: that SQLite file (`sqlite:////abs/path.db`, or a path relative to the working folder);
- `redis://HOST:PORT/DB` (or `rediss://`, `unix://`): Redis through the `redis` package, so replicas behind a proxy
  share their classes.

Every store has contract 18's `create`, `state`, `advance`, `reveal`, `answer` and `tally` (`attnlab.classroom.store`
says what each checks and the choices taken), plus `owns(code, key)` for a teacher who resumes a class. `clock` is for
tests: expiry and the answer rate are read from it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from attnlab.classroom.store import (
    ALPHABET,
    CODE_LENGTH,
    ClassStore,
    Refused,
    StoreUnavailable,
    UnknownClass,
    WrongKey,
    normalize_code,
)
from attnlab.classroom.store_redis import RedisStore
from attnlab.classroom.store_sqlite import SqliteStore, default_path

STORE_ENV = "ATTNLAB_CLASS_STORE"
REDIS_SCHEMES = ("redis", "rediss", "unix")
SQLITE_PREFIX = "sqlite:///"

__all__ = [
    "ALPHABET",
    "CODE_LENGTH",
    "STORE_ENV",
    "ClassStore",
    "Refused",
    "StoreUnavailable",
    "UnknownClass",
    "WrongKey",
    "normalize_code",
    "open_store",
    "store_kind",
]


def store_kind(url: str | None = None) -> str:
    """`sqlite` or `redis`: which store a URL (or the environment) names; ValueError for any other scheme."""
    url = os.environ.get(STORE_ENV, "") if url is None else url
    scheme = urlsplit(url).scheme if url else "sqlite"
    if scheme in REDIS_SCHEMES:
        return "redis"
    if scheme == "sqlite":
        return "sqlite"
    raise ValueError(f"{STORE_ENV}: unknown store {scheme!r}; use sqlite:///PATH or redis://HOST:PORT/DB")


def open_store(url: str | None = None, *, clock: Callable[[], float] = time.time) -> ClassStore:
    """The class store a URL names (None: `ATTNLAB_CLASS_STORE`, and when that is unset the SQLite default)."""
    url = os.environ.get(STORE_ENV, "") if url is None else url
    if store_kind(url) == "redis":
        return RedisStore(url, clock)
    path = url[len(SQLITE_PREFIX) :] if url.startswith(SQLITE_PREFIX) else "" if url else default_path()
    if not path:
        raise ValueError(f"{STORE_ENV}: sqlite:/// needs a file path (sqlite:///classes.db, sqlite:////tmp/c.db)")
    return SqliteStore(path, clock)
