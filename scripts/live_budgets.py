"""The live class's budgets (DESIGN, contract 18), measured on a real `streamlit run` and real stores.

usage: python scripts/live_budgets.py [--students 60] [--seconds 30] [--steps 5] [--store sqlite|redis]
                                      [--answers 300] [--out FILE.json]

1. poll: one student follows an idle class for --seconds; the server's CPU time (from /proc) less that of the same
   server idle for as long, over the polls it served, is the server CPU of one poll (budget: 5 ms).
2. class: --students students follow one class for --seconds: the server's CPU share of one core (budget: 15 %);
   then the teacher moves the class --steps times, and for each move the time until every student's page has run
   on the new step (budget: 3 s for the last of them).
3. answers: --answers answers sent at once (one thread each) to a class on each store, an SQLite file and a private
   redis-server: all must be counted (the tally's total and the state's count).

A student here is a websocket client that speaks Streamlit's protocol the way the browser does for this page: it asks
for `/present?class=CODE`, and when the page registers its polling fragment (`auto_rerun`) it asks for that fragment
every interval, as the browser's timer does; it draws nothing, so only the server is measured. The teacher moves the
class through the store's API, as the teacher's page does on Next.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from attnlab.classroom.live import open_store
from attnlab.testing import cpu_seconds, redis_server, serve_app

POLL_BUDGET_MS, CLASS_BUDGET_SHARE, ARRIVAL_BUDGET_S = 5.0, 0.15, 3.0
LINK = "text=I+like+you+very+much&causal=true&heads=2&step=1&quiz=true"


class Student:
    """One phone following the class: the page once, then the page's poll at the interval it asks for."""

    def __init__(self, url: str, code: str) -> None:
        self.ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
        self.origin, self.query = url, f"class={code}&lang=en"
        self.page_hash = ""
        self.polls = 0  # fragment runs the server finished for this student
        self.pages: list[tuple[float, str]] = []  # (when, the step heading) of each whole-page run

    def rerun(self, fragment: str = "") -> bytes:
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string, state.page_name = self.query, "present"
        state.page_script_hash = self.page_hash
        if fragment:
            state.fragment_id, state.is_auto_rerun = fragment, True
        return msg.SerializeToString()

    async def follow(self, stop: asyncio.Event) -> None:
        async with websockets.connect(self.ws_url, subprotocols=["streamlit"], origin=self.origin, max_size=None) as ws:
            await ws.send(self.rerun())
            timers: dict[str, asyncio.Task] = {}
            heading, announced = "", set()  # the fragments this whole-page run registered
            while not stop.is_set():
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=0.5)
                except TimeoutError:
                    continue
                msg = ForwardMsg.FromString(raw)
                kind = msg.WhichOneof("type")
                if kind == "navigation":  # the page the app's router ran: the browser asks for it from then on
                    self.page_hash = msg.navigation.page_script_hash
                elif kind == "delta" and msg.delta.new_element.WhichOneof("type") == "markdown":
                    text = msg.delta.new_element.markdown.body
                    heading = text if text.startswith("#### ") else heading
                elif kind == "auto_rerun":
                    fid, every = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
                    announced.add(fid)
                    if fid not in timers:
                        timers[fid] = asyncio.create_task(self.tick(ws, fid, every, stop))
                elif kind == "stop_auto_rerun":
                    for fid in set(msg.stop_auto_rerun.fragment_ids) & set(timers):
                        timers.pop(fid).cancel()
                elif kind == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                    self.polls += 1
                elif kind == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                    self.pages.append((time.monotonic(), heading))
                    for fid in set(timers) - announced:  # as the browser does: a fragment the page no longer has stops
                        timers.pop(fid).cancel()
                    announced = set()
            for task in timers.values():
                task.cancel()

    async def tick(self, ws, fragment: str, every: float, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await asyncio.sleep(every)
            await ws.send(self.rerun(fragment))


def follow(url: str, code: str, n: int, seconds: float, pid: int, moves=None) -> dict:
    """n students follow for `seconds` (plus whatever `moves` does meanwhile, in a thread); the server's CPU."""
    students = [Student(url, code) for _ in range(n)]

    async def run() -> tuple[float, float]:
        stop = asyncio.Event()
        tasks = [asyncio.create_task(s.follow(stop)) for s in students]
        while any(not s.pages for s in students):  # every page drawn once before the clock starts
            await asyncio.sleep(0.1)
        await asyncio.sleep(2.0)
        polls0, cpu0, t0 = sum(s.polls for s in students), cpu_seconds(pid), time.monotonic()
        if moves is None:
            await asyncio.sleep(seconds)
        else:
            await asyncio.to_thread(moves, students)
        cpu, wall = cpu_seconds(pid) - cpu0, time.monotonic() - t0
        polls = sum(s.polls for s in students) - polls0
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        return cpu, wall, polls

    cpu, wall, polls = asyncio.run(run())
    return {"students": n, "cpu_s": cpu, "wall_s": wall, "polls": polls, "share_of_core": cpu / wall}


def idle_cpu(pid: int, seconds: float) -> float:
    """The server's CPU per second with nobody connected (its own timers, the warm-up's end)."""
    cpu0 = cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - cpu0) / seconds


def moves_of(store, code: str, key: str, steps: int):
    """The teacher's moves: each step after a pause; returns, per move, when each student's page showed it."""
    arrivals: list[list[float]] = []

    def move(students: list[Student]) -> None:
        for k in range(2, steps + 2):
            time.sleep(3.0)
            sent = time.monotonic()
            store.advance(code, key, k)
            deadline = sent + 30
            while time.monotonic() < deadline:
                seen = [
                    next((t for t, h in s.pages if t >= sent and h.startswith(f"#### {k}.")), None) for s in students
                ]
                if all(seen):
                    break
                time.sleep(0.05)
            arrivals.append([(t - sent) if t else float("inf") for t in seen])

    return move, arrivals


def answers_at_once(url: str, n: int) -> dict:
    """n answers sent at once (a thread each) to one class: are all counted, and how long did they take."""
    store = open_store(url)
    code, key = store.create(LINK.replace("step=1", "step=2"))
    barrier, failed = threading.Barrier(n), []

    def send(i: int) -> None:
        barrier.wait()
        try:
            store.answer(code, f"student-{i}", 2, "5 x 8" if i % 2 else "8 x 5")
        except Exception as e:  # noqa: BLE001 (reported)
            failed.append(repr(e))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(n)]
    t0 = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - t0
    counted = store.state(code)["answers"]
    return {"answers": n, "counted": counted, "tallied": sum(store.tally(code, 2).values()), "seconds": took,
            "failed": failed[:3], "ok": counted == n == sum(store.tally(code, 2).values())}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--store", choices=("sqlite", "redis"), default="sqlite")
    parser.add_argument("--answers", type=int, default=300)
    parser.add_argument("--out")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="attnlab-live-"))
    with redis_server(folder) as redis_url:
        store_url = redis_url if args.store == "redis" else f"sqlite:///{folder}/classes.db"
        report: dict = {"store": args.store, "answers": {}}
        for kind, url in (("sqlite", f"sqlite:///{folder}/answers.db"), ("redis", redis_url)):
            report["answers"][kind] = answers_at_once(url, args.answers)
            print(f"answers at once on {kind}: {report['answers'][kind]}", flush=True)
        env = {**os.environ, "ATTNLAB_CLASS_STORE": store_url}
        with serve_app(".live-budgets-server.log", env=env) as served:
            pid, store = served.proc.pid, open_store(store_url)
            code, key = store.create(LINK)
            follow(served.url, code, 1, 3.0, pid)  # one visit first: the page's imports and caches are warm
            idle = idle_cpu(pid, args.seconds)
            one = follow(served.url, code, 1, args.seconds, pid)
            one["ms_per_poll"] = 1000 * (one["cpu_s"] - idle * one["wall_s"]) / max(1, one["polls"])
            print(f"idle server: {1000 * idle:.1f} ms of CPU per second", flush=True)
            print(f"poll: {one}", flush=True)
            many = follow(served.url, code, args.students, args.seconds, pid)
            many["share_above_idle"] = many["share_of_core"] - idle
            many["ms_per_poll"] = 1000 * (many["cpu_s"] - idle * many["wall_s"]) / max(1, many["polls"])
            print(f"class: {many}", flush=True)
            move, arrivals = moves_of(store, code, key, args.steps)
            follow(served.url, code, args.students, 0, pid, moves=move)
            last = [max(a) for a in arrivals]
            report.update(idle_ms_per_s=1000 * idle, poll=one, follow=many, arrival_last_s=last,
                          arrival_median_s=statistics.median(t for a in arrivals for t in a))  # fmt: skip
            print(f"teacher's step reached all {args.students}: last after {[round(x, 2) for x in last]} s", flush=True)
    report["within_budget"] = {
        "poll_ms": report["poll"]["ms_per_poll"] <= POLL_BUDGET_MS,
        "class_share": report["follow"]["share_above_idle"] <= CLASS_BUDGET_SHARE,
        "arrival": max(report["arrival_last_s"]) <= ARRIVAL_BUDGET_S,
        "answers": all(r["ok"] for r in report["answers"].values()),
    }
    print(json.dumps(report["within_budget"]))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0 if all(report["within_budget"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
