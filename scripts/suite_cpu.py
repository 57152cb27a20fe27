"""Where the test suite's time goes: run `python -m pytest`, and say whose CPU it used and how busy the cores were.

usage: python scripts/suite_cpu.py [--out FILE.json] [-- PYTEST_ARGS ...]

The suite is bound by its CPU work on a small machine (both xdist workers end together, the cores nearly always
busy), so a change is judged by the CPU-seconds it saves, which the VM's hour-to-hour speed moves less than the
wall time. Every process on the machine is read from /proc four times a second while the suite runs; a process's
CPU is its last reading less what it had used when the run began, and each is counted under its kind (Chromium's
renderer, GPU process and browser process, Streamlit servers, pytest's workers and controller, other Python).
A process that lives less than a quarter second is missed; what the kinds add up to is beside the machine's own
total (/proc/stat), so what was missed shows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter

HZ = os.sysconf("SC_CLK_TCK")
KINDS = (  # (what the command line holds, the kind): first match wins
    ("--type=renderer", "chromium renderer"),
    ("--type=gpu-process", "chromium gpu process"),
    ("--type=", "chromium other"),
    ("chrom", "chromium browser process"),
    ("streamlit", "streamlit servers"),
    ("exec(eval(sys.stdin", "pytest workers"),  # how execnet starts an xdist worker
    ("pytest", "pytest controller"),
    ("python", "other python (fresh interpreters, kernels, snapshots)"),
)


def kind_of(command: str) -> str:
    """The kind a process is counted under, from its command line."""
    return next((kind for needle, kind in KINDS if needle in command), "other")


def read_processes() -> dict[tuple[str, str], tuple[str, float]]:
    """Every process now: (pid, start time) -> (command line, CPU seconds used so far)."""
    seen, me = {}, str(os.getpid())
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # ended while we looked
        seen[(pid, fields[19])] = (command, (int(fields[11]) + int(fields[12])) / HZ)
    return seen


def machine_busy_s() -> float:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as f:
        ticks = [int(t) for t in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / HZ


def sample(stop: threading.Event, used: dict, before: dict) -> None:
    """Keep each process's latest CPU reading, less what it had used before the run, until `stop` is set.

    A process keeps the command line it was first seen with: one that has ended but not yet been waited for (a
    zombie) still shows its CPU time, but no command line any more.
    """
    while not stop.is_set():
        for key, (command, cpu) in read_processes().items():
            first = used.get(key, (command, 0.0))[0] or command
            used[key] = (first, cpu - before.get(key, (command, 0.0))[1])
        stop.wait(0.25)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the figures to this JSON file")
    ap.add_argument("pytest_args", nargs="*", help="after --: passed to pytest as they are")
    args = ap.parse_args(argv)
    before, used, stop = read_processes(), {}, threading.Event()
    watcher = threading.Thread(target=sample, args=(stop, used, before), daemon=True)
    busy_before, start = machine_busy_s(), time.monotonic()
    watcher.start()
    code = subprocess.call([sys.executable, "-m", "pytest", *args.pytest_args])
    wall, busy = time.monotonic() - start, machine_busy_s() - busy_before
    stop.set()
    watcher.join()
    by_kind = Counter()
    for command, cpu in used.values():
        by_kind[kind_of(command)] += max(cpu, 0.0)
    cores = os.cpu_count() or 1
    report = {
        "pytest_exit": code,
        "wall_s": round(wall, 1),
        "cores": cores,
        "machine_busy_cpu_s": round(busy, 1),
        "cores_busy_share": round(busy / (wall * cores), 3),
        "cpu_s_by_kind": {kind: round(cpu, 1) for kind, cpu in by_kind.most_common()},
        "cpu_s_counted": round(sum(by_kind.values()), 1),
    }
    print(json.dumps(report, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return code


if __name__ == "__main__":
    sys.exit(main())
