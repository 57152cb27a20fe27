"""Measure the language models' own budgets (issue 52, contract 16): load <= 1 s and <= 100 MB resident, a forward
pass at 256 characters <= 150 ms on one core, a cached generation step <= 10 ms. (The page's: scripts/lm_budgets.py.)

usage: python scripts/lm_model_budgets.py [--models zh,en] [--repeats 20] [--out lm_model_budgets.json]

Each model loads in a fresh interpreter (torch imported first, not counted): the seconds of `attnlab.lm.load` and
the resident memory it adds (VmRSS before and after). The forward pass and the cached step run with one torch
thread: the forward on the model's longest input (<bos> and 255 characters), the step with the cache filled by a
128-character prompt (whole, and as a 64-token window with 4 sinks). Medians and p90 of `--repeats` runs after a
warm-up; how busy the machine was meanwhile (attnlab.bench.busy) is printed beside them, since on a shared machine
every figure is an upper bound.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

LOAD = """
import json, time, torch
def rss():
    return int(next(l for l in open('/proc/self/status') if l.startswith('VmRSS')).split()[1]) * 1024
import attnlab.lm as lm
before = rss(); t = time.perf_counter(); m = lm.load({name!r}); s = time.perf_counter() - t
print(json.dumps({{"load_s": s, "rss_added_mb": (rss() - before) / 2**20, "steps": m.steps}}))
"""


def load_cost(name: str) -> dict:
    """Seconds and resident megabytes of one load, in a fresh interpreter (imports done before the clock starts)."""
    out = subprocess.run([sys.executable, "-c", LOAD.format(name=name)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def summary(times: list[float]) -> dict:
    """Median and p90 in milliseconds."""
    times = sorted(t * 1000 for t in times)
    return {"median_ms": round(statistics.median(times), 2), "p90_ms": round(times[int(0.9 * (len(times) - 1))], 2)}


def timed(fn, repeats: int) -> dict:
    """fn() timed `repeats` times after one warm-up."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return summary(times)


def one_step(model, filled, token: int) -> None:
    """One cached step from a copy of the filled cache (so every timed step starts from the same cache)."""
    import torch

    cache = model.new_cache(filled.window, filled.sinks)
    cache.keys, cache.values = list(filled.keys), list(filled.values)
    cache.positions, cache.fed = list(filled.positions), filled.fed
    model.forward(torch.tensor([[token]]), cache=cache)


def run_costs(name: str, repeats: int) -> dict:
    """The forward pass at the longest input and one cached step, on one thread."""
    import torch

    import attnlab.lm as lm

    torch.set_num_threads(1)
    model = lm.load(name)
    text = "".join(lm.run_metrics(name)["copy_passages"]) * 8
    ids = torch.tensor([model.prepare(text).ids])  # the model's length: <bos> and max_len - 1 characters
    prompt = model.prepare(text[:128]).ids
    out = {"forward_tokens": ids.size(1), "forward": timed(lambda: model.forward(ids), repeats)}
    for label, window, sinks in (("step", None, 0), ("step_window", 64, 4)):
        filled = model.new_cache(window, sinks)
        model.forward(torch.tensor([prompt[:-1]]), cache=filled)
        out[label] = timed(lambda filled=filled: one_step(model, filled, prompt[-1]), repeats)
    return out


def main() -> None:
    from attnlab.bench.busy import BusyMeter

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="zh,en")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    meter, results = BusyMeter.start(), {}
    for name in a.models.split(","):
        results[name] = {"load": load_cost(name), **run_costs(name, a.repeats)}
        r = results[name]
        print(
            f"{name}: load {r['load']['load_s']:.3f} s, +{r['load']['rss_added_mb']:.1f} MB resident; forward at "
            f"{r['forward_tokens']} tokens {r['forward']['median_ms']} ms (p90 {r['forward']['p90_ms']}); cached step "
            f"{r['step']['median_ms']} ms, with a window {r['step_window']['median_ms']} ms"
        )
    results["machine_load"] = meter.read()
    print(f"machine: other work kept {results['machine_load']['other_busy_cores']} cores busy on average")
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
