"""The Trained decoder page's numbers, under the name its sections import: the core's `attnlab.trained.readout`.

They moved to the core so that the course grades its decoder tasks with the page's own functions.
"""

from attnlab.trained.readout import (
    TOP_K,
    Induction,
    Prediction,
    accuracy_on_repeats,
    mean_losses,
    offset,
    parse_symbols,
    predictions,
    previous_followers,
    random_repeating,
    strongest_induction,
)

__all__ = [
    "TOP_K",
    "Induction",
    "Prediction",
    "accuracy_on_repeats",
    "mean_losses",
    "offset",
    "parse_symbols",
    "predictions",
    "previous_followers",
    "random_repeating",
    "strongest_induction",
]
