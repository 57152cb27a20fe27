"""Whether the machine was otherwise busy during a run: CPU time spent by anything but the timing thread.

A CPU timing shares its cores with whatever else runs (other visitors' pages, other processes), so a result
records, around its own sweep, how many cores other work kept busy on average, read as the difference of
two /proc/stat samples (all CPU time on the machine) minus the CPU time of the thread doing the timing
(time.thread_time), plus the 1-minute load average before and after. Where /proc/stat is missing (not
Linux) only the load average is recorded and the share is None.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from attnlab.limits import BUSY_OTHER_CORES

PROC_STAT = "/proc/stat"


def busy_cpu_s() -> float | None:
    """Seconds of CPU time the whole machine has spent busy since boot (all cores; idle and iowait excluded)."""
    try:
        with open(PROC_STAT, encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    busy = sum(ticks) - ticks[3] - ticks[4]
    return busy / os.sysconf("SC_CLK_TCK")


def load_1m() -> float | None:
    """The 1-minute load average (runnable threads, this run's own included), None where the OS has none."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


@dataclass(frozen=True)
class BusyMeter:
    """Samples taken when the run started, in the thread that does the timing."""

    wall: float
    busy: float | None
    own: float
    load: float | None
    cores: int

    @classmethod
    def start(cls) -> BusyMeter:
        """Sample now; call `read` later from the same thread."""
        return cls(time.monotonic(), busy_cpu_s(), time.thread_time(), load_1m(), os.cpu_count() or 1)

    def read(self) -> dict:
        """The env block `machine_load`: other work's cores and share of the machine since `start`, and the load."""
        wall = time.monotonic() - self.wall
        busy, own = busy_cpu_s(), time.thread_time() - self.own
        other = None
        if busy is not None and self.busy is not None and wall > 0:
            other = round(max(0.0, min(float(self.cores), (busy - self.busy - own) / wall)), 2)  # busy: as shown
        return {
            "cores": self.cores,
            "other_busy_cores": other,
            "other_share": None if other is None else round(other / self.cores, 3),
            "busy": None if other is None else other >= BUSY_OTHER_CORES,
            "load_1m_before": None if self.load is None else round(self.load, 2),
            "load_1m_after": None if (load := load_1m()) is None else round(load, 2),
            "window_s": round(wall, 3),
            "method": "(/proc/stat busy CPU time - the timing thread's time.thread_time) / wall time, over the "
            f"whole sweep; busy when other work kept at least {BUSY_OTHER_CORES} core(s) busy on average",
        }
