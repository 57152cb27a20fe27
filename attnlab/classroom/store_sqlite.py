"""The live class on one SQLite file: the embedded default, shared by every process of a machine that opens it.

Every write is one `BEGIN IMMEDIATE` transaction that reads what it checks and writes in the same lock, so 300
students answering at once (threads of one server, or several servers on one machine) are serialised and none is
lost; the journal is WAL, so a poll's read never waits for a write. Each thread has its own connection (sqlite3's
connections are not shared between threads). The default file is in the server's temporary folder, named for the
user, created private (0600) and refused when another user owns it: a shared /tmp must not let anyone plant a class.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from attnlab.classroom.store import (
    LIMITS,
    ClassStore,
    Refused,
    Row,
    StoreUnavailable,
    UnknownClass,
    rate_window,
)
from attnlab.limits import CLASS_IDLE_S

POOL_SIZE = 8  # idle connections kept
BUSY_TIMEOUT_S = 30.0  # how long a writer waits for the lock (300 answers at once take well under a second)
SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (code TEXT PRIMARY KEY, key_hash TEXT NOT NULL, link TEXT NOT NULL,
    step INTEGER NOT NULL, round INTEGER NOT NULL, changed REAL NOT NULL);
CREATE TABLE IF NOT EXISTS revealed (code TEXT, round INTEGER, step INTEGER, PRIMARY KEY (code, round, step));
CREATE TABLE IF NOT EXISTS answers (code TEXT, round INTEGER, step INTEGER, student TEXT, text TEXT NOT NULL,
    PRIMARY KEY (code, round, step, student));
CREATE TABLE IF NOT EXISTS students (code TEXT, student TEXT, PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS rate (code TEXT, student TEXT, window INTEGER NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (code, student));
"""
TABLES = ("revealed", "answers", "students", "rate")  # a class's rows beside `classes`
STATE = """
SELECT c.key_hash, c.link, c.step, c.round, c.changed,
    EXISTS (SELECT 1 FROM revealed r WHERE r.code = c.code AND r.round = c.round AND r.step = c.step),
    (SELECT COUNT(*) FROM answers a WHERE a.code = c.code AND a.round = c.round AND a.step = c.step)
FROM classes c WHERE c.code = ? AND c.changed >= ?
"""


def default_path() -> str:
    """The embedded store's file: the temporary folder, one file per user (replicas on one machine share it)."""
    owner = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return os.path.join(tempfile.gettempdir(), f"attnlab-classes-{owner}.sqlite3")


def _claim(path: str) -> None:
    """Create the file private to this user, or check that an existing one is this user's and not writable by others."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as e:
        raise StoreUnavailable(f"cannot open {path}: {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
            raise StoreUnavailable(f"{path} belongs to another user or others may write it")
    finally:
        os.close(fd)


class SqliteStore(ClassStore):
    """Classes in one SQLite file (WAL), through a small pool of connections any thread may borrow, one at a time."""

    def __init__(self, path: str, clock: Callable[[], float]) -> None:
        super().__init__(clock)
        self.path = path
        self._pool: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        _claim(path)
        with self._borrow() as db:
            try:
                db.executescript(SCHEMA)  # its own transaction (executescript commits first)
            except sqlite3.Error as e:
                raise StoreUnavailable(f"{path}: {e}") from None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    @contextmanager
    def _borrow(self) -> Iterator[sqlite3.Connection]:
        """A connection for one transaction (Streamlit runs each script run in a thread of its own: a connection per
        thread would be opened on every poll)."""
        with self._lock:
            db = self._pool.pop() if self._pool else None
        try:
            db = db or self._connect()
        except sqlite3.Error as e:
            raise StoreUnavailable(f"{self.path}: {e}") from None
        try:
            yield db
        finally:
            with self._lock:
                keep = len(self._pool) < POOL_SIZE
                if keep:
                    self._pool.append(db)
            if not keep:
                db.close()

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        """One transaction; a database error becomes StoreUnavailable, anything raised rolls it back."""
        with self._borrow() as db:
            try:
                db.execute(begin)
                yield db
                db.execute("COMMIT")
            except BaseException as e:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                if isinstance(e, sqlite3.Error):
                    raise StoreUnavailable(f"{self.path}: {e}") from None
                raise

    def _write(self):
        """A write: the lock taken before the first read, so what it checks stays true until it commits."""
        return self._transaction("BEGIN IMMEDIATE")

    def _read(self):
        """A read: one snapshot (WAL: it never waits for a writer)."""
        return self._transaction("BEGIN")

    def _live(self, db: sqlite3.Connection, code: str, alive_since: float) -> Row | None:
        found = db.execute(
            "SELECT key_hash, link, step, round, changed FROM classes WHERE code = ? AND changed >= ?",
            (code, alive_since),
        ).fetchone()
        return Row(*found) if found else None

    def _create(self, code: str, row: Row) -> bool:
        with self._write() as db:
            self._sweep(db, row.changed - CLASS_IDLE_S)
            if db.execute("SELECT 1 FROM classes WHERE code = ?", (code,)).fetchone():
                return False
            db.execute(
                "INSERT INTO classes VALUES (?, ?, ?, ?, ?, ?)",
                (code, row.key_hash, row.link, row.step, row.round, row.changed),
            )
        return True

    def _sweep(self, db: sqlite3.Connection, alive_since: float) -> None:
        """Delete expired classes and their rows."""
        gone = [c for (c,) in db.execute("SELECT code FROM classes WHERE changed < ?", (alive_since,))]
        for code in gone:
            for table in ("classes", *TABLES):
                db.execute(f"DELETE FROM {table} WHERE code = ?", (code,))  # noqa: S608 (names from TABLES)

    def _state(self, code: str, alive_since: float) -> tuple[Row, bool, int] | None:
        """One statement (SQLite reads it from one snapshot), so a poll costs one round through the library."""
        with self._borrow() as db:
            try:
                found = db.execute(STATE, (code, alive_since)).fetchone()
            except sqlite3.Error as e:
                raise StoreUnavailable(f"{self.path}: {e}") from None
        if found is None:
            return None
        return Row(*found[:5]), bool(found[5]), found[6]

    def _advance(self, code: str, row: Row, step: int, link: str | None, now: float) -> None:
        with self._write() as db:
            current = self._current(db, code, now)
            new_round = current.round + 1 if link is not None and link != current.link else current.round
            db.execute(
                "UPDATE classes SET step = ?, link = ?, round = ?, changed = ? WHERE code = ?",
                (step, link if link is not None else current.link, new_round, now, code),
            )

    def _reveal(self, code: str, row: Row, now: float) -> None:
        with self._write() as db:
            current = self._current(db, code, now)
            db.execute("INSERT OR IGNORE INTO revealed VALUES (?, ?, ?)", (code, current.round, current.step))
            db.execute("UPDATE classes SET changed = ? WHERE code = ?", (now, code))

    def _current(self, db: sqlite3.Connection, code: str, now: float) -> Row:
        current = self._live(db, code, now - CLASS_IDLE_S)
        if current is None:
            raise UnknownClass(code)
        return current

    def _answer(self, code: str, row: Row, student: str, step: int, text: str, now: float) -> None:
        with self._write() as db:
            current = self._current(db, code, now)
            if (current.step, current.round) != (step, row.round):
                raise Refused("not_current", step=step, current=current.step)
            if db.execute(
                "SELECT 1 FROM revealed WHERE code=? AND round=? AND step=?", (code, row.round, step)
            ).fetchone():
                raise Refused("revealed", step=step)
            known = db.execute("SELECT 1 FROM students WHERE code=? AND student=?", (code, student)).fetchone()
            if not known:
                (n,) = db.execute("SELECT COUNT(*) FROM students WHERE code=?", (code,)).fetchone()
                if n >= LIMITS["students"]:
                    raise Refused("full", cap=LIMITS["students"])
            window = rate_window(now)
            sent = db.execute("SELECT window, n FROM rate WHERE code=? AND student=?", (code, student)).fetchone()
            n = sent[1] if sent and sent[0] == window else 0
            if n >= LIMITS["burst"]:
                raise Refused("rate", burst=LIMITS["burst"], window=LIMITS["window"])
            db.execute("INSERT OR REPLACE INTO rate VALUES (?, ?, ?, ?)", (code, student, window, n + 1))
            db.execute("INSERT OR IGNORE INTO students VALUES (?, ?)", (code, student))
            db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)", (code, row.round, step, student, text))
            db.execute("UPDATE classes SET changed = ? WHERE code = ?", (now, code))

    def _answers(self, code: str, row: Row, step: int) -> list[str]:
        with self._read() as db:
            rows = db.execute("SELECT text FROM answers WHERE code=? AND round=? AND step=?", (code, row.round, step))
            return [text for (text,) in rows]

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, []
        for db in pool:
            db.close()
