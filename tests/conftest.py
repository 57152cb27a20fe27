"""Settings for every test process: one torch thread per xdist worker.

`-n auto` already runs one worker per core. With torch's default of a thread per core as well, two workers (and the
browser beside them) ask for twice the cores there are, and torch's threads spin while they wait for each other: the
unit and AppTest tests took 11 % more CPU that way. Servers and kernels the tests start inherit the variable.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402  (after the variable, so torch's pool starts at one thread)

torch.set_num_threads(1)
