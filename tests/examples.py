"""`examples(n)`: how many hypothesis examples a property runs, scaled by the profile in force.

The default run loads the profile "attnlab" (100 examples for a property that names no count); the capability pass's
runs load "pass" (25): it looks for an order of summing that moves a value past its tolerance, which the first examples
find as well as the last (tests/conftest.py). A property that names its own count names it through `examples`, so
that the pass runs a quarter of those too: hypothesis lets a count written in `@settings` override any profile.
"""

from __future__ import annotations

from hypothesis import settings

DEFAULT = 100  # the examples of the default run's profile, which `n` is written against


def examples(n: int) -> int:
    """`n` in the default run; as many times fewer as the profile in force runs fewer than 100 (at least one)."""
    return max(1, n * settings.default.max_examples // DEFAULT)
