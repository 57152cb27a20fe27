"""The live class on Redis (`ATTNLAB_CLASS_STORE=redis://HOST:PORT/DB`): replicas behind a proxy share every class.

Each write is one Lua script, which Redis runs atomically: it checks what it must (the class alive, the step and round
still current, the step open, the student within the limits) and writes, so concurrent answers from any number of
processes lose nothing. A poll is one script too: one round trip. A class's keys share the hash tag `{CODE}` (one
cluster slot), and each carries a TTL a little past the idle limit, reset on every change, so Redis forgets a class
that `state` already calls expired. The teacher's key is checked in Python, in constant time, against the stored hash
(it never changes, so checking before the script is safe); the `redis` package is imported only when a Redis store is
opened, so the library installs without it.
"""

from __future__ import annotations

from collections.abc import Callable

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
from attnlab.stages import N_STEPS

TIMEOUT_S = 2.0  # a poll that cannot reach Redis says so within this, rather than hang the page
MAX_CONNECTIONS = 32  # per process: a burst of answers waits for a free one rather than open hundreds
POOL_WAIT_S = 10.0  # how long a call waits for a free connection (each is held for well under a millisecond)
TTL_S = CLASS_IDLE_S + 600  # Redis's own expiry: after the logical one, so the contract's clock decides
TOUCH = f"""
local function touch(p, round, ttl)
  redis.call('EXPIRE', p .. 'class', ttl)
  redis.call('EXPIRE', p .. 'students', ttl)
  redis.call('EXPIRE', p .. 'revealed:' .. round, ttl)
  for s = 1, {N_STEPS} do redis.call('EXPIRE', p .. 'answers:' .. round .. ':' .. s, ttl) end
end
local function alive(c, since) return c and tonumber(c) >= tonumber(since) end
"""
CREATE = (
    TOUCH
    + """
local p = KEYS[1]
local old = redis.call('HMGET', p .. 'class', 'round', 'changed')
local round = 0
if old[1] then
  if alive(old[2], ARGV[5]) then return 0 end
  round = tonumber(old[1]) + 1
  redis.call('DEL', p .. 'students')
end
redis.call('HSET', p .. 'class', 'key_hash', ARGV[1], 'link', ARGV[2], 'step', ARGV[3], 'round', round,
  'changed', ARGV[4])
touch(p, round, ARGV[6])
return 1
"""
)
STATE = (
    TOUCH
    + """
local p = KEYS[1]
local c = redis.call('HMGET', p .. 'class', 'key_hash', 'link', 'step', 'round', 'changed')
if not c[1] or not alive(c[5], ARGV[1]) then return nil end
local revealed = redis.call('SISMEMBER', p .. 'revealed:' .. c[4], c[3])
local answers = redis.call('HLEN', p .. 'answers:' .. c[4] .. ':' .. c[3])
return {c[1], c[2], c[3], c[4], c[5], revealed, answers}
"""
)
ADVANCE = (
    TOUCH
    + """
local p = KEYS[1]
local c = redis.call('HMGET', p .. 'class', 'link', 'round', 'changed')
if not c[1] or not alive(c[3], ARGV[1]) then return 'unknown' end
local round = tonumber(c[2])
if ARGV[4] == '1' and ARGV[3] ~= c[1] then
  round = round + 1
  redis.call('HSET', p .. 'class', 'link', ARGV[3], 'round', round)
end
redis.call('HSET', p .. 'class', 'step', ARGV[2], 'changed', ARGV[5])
touch(p, round, ARGV[6])
return 'ok'
"""
)
REVEAL = (
    TOUCH
    + """
local p = KEYS[1]
local c = redis.call('HMGET', p .. 'class', 'step', 'round', 'changed')
if not c[1] or not alive(c[3], ARGV[1]) then return 'unknown' end
redis.call('SADD', p .. 'revealed:' .. c[2], c[1])
redis.call('HSET', p .. 'class', 'changed', ARGV[2])
touch(p, c[2], ARGV[3])
return 'ok'
"""
)
ANSWER = (
    TOUCH
    + """
local p = KEYS[1]
local c = redis.call('HMGET', p .. 'class', 'step', 'round', 'changed')
if not c[1] or not alive(c[3], ARGV[1]) then return {'unknown'} end
if c[1] ~= ARGV[2] or c[2] ~= ARGV[3] then return {'not_current', c[1]} end
if redis.call('SISMEMBER', p .. 'revealed:' .. c[2], c[1]) == 1 then return {'revealed'} end
local students = p .. 'students'
if redis.call('SISMEMBER', students, ARGV[4]) == 0 and redis.call('SCARD', students) >= tonumber(ARGV[8]) then
  return {'full'}
end
local rate = p .. 'rate:' .. ARGV[10] .. ':' .. ARGV[4]
if tonumber(redis.call('GET', rate) or '0') >= tonumber(ARGV[9]) then return {'rate'} end
redis.call('INCR', rate)
redis.call('EXPIRE', rate, ARGV[11])
redis.call('SADD', students, ARGV[4])
redis.call('HSET', p .. 'answers:' .. c[2] .. ':' .. c[1], ARGV[4], ARGV[5])
redis.call('HSET', p .. 'class', 'changed', ARGV[6])
touch(p, c[2], ARGV[7])
return {'ok'}
"""
)


def prefix(code: str) -> str:
    """Every key of one class starts with this; the braces make it one cluster slot."""
    return f"attnlab:{{{code}}}:"


class RedisStore(ClassStore):
    """Classes in Redis, every check-and-write one Lua script."""

    def __init__(self, url: str, clock: Callable[[], float]) -> None:
        super().__init__(clock)
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self._errors = redis.RedisError
        pool = redis.BlockingConnectionPool.from_url(
            url,
            max_connections=MAX_CONNECTIONS,
            timeout=POOL_WAIT_S,
            decode_responses=True,
            socket_timeout=TIMEOUT_S,
            socket_connect_timeout=TIMEOUT_S,
            retry=Retry(NoBackoff(), 1),
        )
        self.client = redis.Redis(connection_pool=pool)
        self._scripts = {
            name: self.client.register_script(body)
            for name, body in {
                "create": CREATE,
                "state": STATE,
                "advance": ADVANCE,
                "reveal": REVEAL,
                "answer": ANSWER,
            }.items()
        }

    def _run(self, name: str, code: str, *args: object):
        """One script on one class's keys; a Redis that cannot be reached becomes StoreUnavailable."""
        try:
            return self._scripts[name](keys=[prefix(code)], args=[str(a) for a in args])
        except self._errors as e:
            raise StoreUnavailable(f"Redis: {e}") from None

    def _create(self, code: str, row: Row) -> bool:
        alive_since = row.changed - CLASS_IDLE_S
        return bool(self._run("create", code, row.key_hash, row.link, row.step, repr(row.changed), alive_since, TTL_S))

    def _state(self, code: str, alive_since: float) -> tuple[Row, bool, int] | None:
        found = self._run("state", code, repr(alive_since))
        if found is None:
            return None
        key_hash, link, step, round_, changed, revealed, answers = found
        return Row(key_hash, link, int(step), int(round_), float(changed)), bool(revealed), int(answers)

    def _advance(self, code: str, row: Row, step: int, link: str | None, now: float) -> None:
        alive_since = repr(now - CLASS_IDLE_S)
        new = ("1", link) if link is not None else ("0", "")
        if self._run("advance", code, alive_since, step, new[1], new[0], repr(now), TTL_S) == "unknown":
            raise UnknownClass(code)

    def _reveal(self, code: str, row: Row, now: float) -> None:
        if self._run("reveal", code, repr(now - CLASS_IDLE_S), repr(now), TTL_S) == "unknown":
            raise UnknownClass(code)

    def _answer(self, code: str, row: Row, student: str, step: int, text: str, now: float) -> None:
        window = rate_window(now)
        status, *current = self._run(
            "answer",
            code,
            repr(now - CLASS_IDLE_S),
            step,
            row.round,
            student,
            text,
            repr(now),
            TTL_S,
            LIMITS["students"],
            LIMITS["burst"],
            window,
            2 * LIMITS["window"],
        )
        if status == "unknown":
            raise UnknownClass(code)
        if status == "not_current":
            raise Refused("not_current", step=step, current=int(current[0]))
        if status == "revealed":
            raise Refused("revealed", step=step)
        if status == "full":
            raise Refused("full", cap=LIMITS["students"])
        if status == "rate":
            raise Refused("rate", burst=LIMITS["burst"], window=LIMITS["window"])

    def _answers(self, code: str, row: Row, step: int) -> list[str]:
        try:
            return list(self.client.hvals(f"{prefix(code)}answers:{row.round}:{step}"))
        except self._errors as e:
            raise StoreUnavailable(f"Redis: {e}") from None

    def close(self) -> None:
        self.client.close()
