"""Settings for every test process (one torch thread per xdist worker, the garbage collector, Hypothesis without a
deadline), and the one live run two tests share.

`-n auto` already runs one worker per core. With torch's default of a thread per core as well, two workers (and the
browser beside them) ask for twice the cores there are, and torch's threads spin while they wait for each other: the
unit and AppTest tests took 11 % more CPU that way. Servers and kernels the tests start inherit the variable.

Collecting imports torch, Streamlit, Plotly and every module the tests name: about 360,000 objects that live as long as
the process. Python's collector would scan them in every full collection (13 of them during collection alone, 2 s of a
worker's start, then 0.2 to 0.3 s each while the tests run and five more when pytest ends), so it is off while
collecting and what collecting built is then frozen (`gc.freeze`): later collections scan only what the tests make.

Hypothesis fails an example that takes over 200 ms by default. Property tests here check values, not speed, and on
two busy cores an example's time says more about the machine (`test_numbers_round_trip` once failed at 274 ms for an
example that took 0.5 ms when replayed), so no example has a deadline.

The capability pass's processes load the profile "pass" instead, a quarter of the examples (why: tests/examples.py).
"""

from __future__ import annotations

import gc
import os

import pytest
from hypothesis import settings

PROFILE_ENV = "ATTNLAB_HYPOTHESIS_PROFILE"  # "pass": the capability pass's runs (tests/unit/test_cpu_capabilities.py)
settings.register_profile("attnlab", deadline=None)  # see above: values are checked, not speed
settings.register_profile("pass", settings.get_profile("attnlab"), max_examples=25)
settings.load_profile(os.environ.get(PROFILE_ENV, "attnlab"))
os.environ.setdefault("OMP_NUM_THREADS", "1")  # before any test process imports torch: its pool starts at one


def pytest_collection(session: pytest.Session) -> None:
    """One torch thread in every process that runs tests, whatever OMP_NUM_THREADS said.

    Only processes that collect call this: xdist's controller collects nothing and no longer imports torch (2.5 s of
    CPU). The workers then start 4 s sooner but import torch while collecting instead, so their start is no shorter.
    """
    import torch

    torch.set_num_threads(1)
    gc.disable()


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting built lives as long as the process: collect once, freeze it, and let the collector run again."""
    gc.collect()
    gc.freeze()
    gc.enable()


LIVE_STEPS, LIVE_SEED = 200, 0  # the Trained decoder page's default live run (its number inputs' defaults)
LIVE_GROUP = pytest.mark.xdist_group("live-run")  # the tests that read `default_live_runs` share one worker's copy
# The tests that import the reference libraries we check against share one worker, so one process pays for each
# import: transformers (4.3 s of CPU with a BertModel), sentence-transformers (2 s more) and scipy.stats (1.5 s,
# which sentence-transformers imports too).
REFERENCE_GROUP = pytest.mark.xdist_group("reference-libraries")
FRESH_GROUP = pytest.mark.xdist_group("fresh-interpreter")  # the readers of `fresh_answers` share one worker's copy


@pytest.fixture(scope="session")
def fresh_answers() -> dict[str, dict]:
    """What one fresh interpreter answers to the questions in `tests/fresh.py` (read them with `tests.fresh.answer`)."""
    from tests.fresh import answers

    return answers()


@pytest.fixture(scope="session")
def default_live_runs() -> dict[str, list[tuple[int, dict]]]:
    """Every (step, losses) the page's default live run reports, for the 2-layer recipe and its 1-layer control.

    Trained once per test process: the core's test reads whether it crosses the change, the page's test replays
    the 2-layer run through the page to see the change marked. Each run took about 6 s of CPU here.
    """
    from attnlab.trained import training

    runs: dict[str, list[tuple[int, dict]]] = {"induction-2l": [], "induction-1l": []}
    for name, seen in runs.items():
        training.train_live(name, LIVE_STEPS, lambda *reported, into=seen: into.append(reported), seed=LIVE_SEED)
    return runs


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory) -> str:
    """A real `redis-server` (Debian's package) on a free port for the test process: the live class's shared store.

    Outside CI a machine without the binary skips with the reason; in CI (`.ci/run` installs it) that is a failure.
    """
    from attnlab.testing import redis_binary, redis_server

    if redis_binary() is None:
        message = "no redis-server (apt-get install redis-server) for the live class's Redis store"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url
