"""Value checks every layer shares: each bad value is one ValueError line naming what is valid.

>>> integer_in(0, "task.digits", 1, 100)
Traceback (most recent call last):
...
ValueError: task.digits must be an integer in [1, 100], got 0
"""

from __future__ import annotations

import importlib
import math
from decimal import ROUND_FLOOR, Decimal
from typing import Any

MAX_SEED = 2**32 - 1  # a seed numpy and Lightning accept
MAX_WIDTH = 1024  # filters or units of a layer, slices of an NTN head: beyond it no small network
MAX_BATCH = 60_000  # items of a batch: MNIST's training images (a larger batch is no more data)
MAX_THREADS = 1024  # torch threads of a job (torch takes a C int)


def integer_in(value: Any, name: str, low: int, high: float = math.inf) -> None:
    """`value` is an int in [low, high] (bools are not)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        bound = f"in [{low}, {high}]" if high < math.inf else f">= {low}"
        raise ValueError(f"{name} must be an integer {bound}, got {value!r}")


def layer_width(value: Any, name: str) -> None:
    """`value` is a whole number of filters, units or NTN slices in [1, MAX_WIDTH]."""
    integer_in(value, name, 1, MAX_WIDTH)


def batch_items(value: Any, name: str) -> None:
    """`value` is a whole number of items a batch in [1, MAX_BATCH]."""
    integer_in(value, name, 1, MAX_BATCH)


def number(value: Any, name: str, low: float, *, open_low: bool) -> None:
    """`value` is a finite number > low (`open_low`) or >= low."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < low or (open_low and value == low):
        relation = ">" if open_low else ">="
        raise ValueError(f"{name} must be a finite number {relation} {low}, got {value!r}")


def fraction(value: Any, name: str) -> None:
    """`value` is a number in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
        raise ValueError(f"{name} must be a fraction in [0, 1), got {value!r}")


def imported(target: str, key: str, choices: str) -> Any:
    """What a config's `_target_` (module.attribute) names, imported; else one ValueError line,
    `<key>=<target> does not import (why); <choices>`. The caller checks what it is."""
    module, _, attribute = target.rpartition(".")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError, ValueError) as err:
        raise ValueError(f"{key}={target!r} does not import ({err}); {choices}") from None


def tail_steps(metrics_tail: float, max_steps: int) -> int:
    """The steps of the final window a run's summary ratios are read over (Section 9.1:
    `profile.metrics_tail`): a fraction of max_steps if < 1 (at least one step), else steps."""
    if metrics_tail <= 0:
        raise ValueError(f"metrics_tail must be > 0 (a fraction < 1 or steps), got {metrics_tail}")
    if metrics_tail < 1:
        return max(1, math.ceil(metrics_tail * max_steps))
    return int(metrics_tail)


def tail_spelling(window: int, max_steps: int) -> float:
    """The one spelling of the metrics window of the last `window` of `max_steps` steps
    (tail_steps): the fraction of fewest decimals whose window it is, of those
    the nearest window / max_steps. A step count, or another fraction of that window, names the
    same run under another hash.

    >>> tail_spelling(1000, 10000), tail_spelling(2, 4), tail_spelling(100, 100)
    (0.1, 0.5, 0.999)
    """
    exact = Decimal(window) / Decimal(max_steps)
    for digits in range(1, 18):
        unit = Decimal(1).scaleb(-digits)
        floor = exact.quantize(unit, ROUND_FLOOR)
        near = [floor + k * unit for k in (-1, 0, 1)]
        fits = [d for d in near if 0 < d < 1 and tail_steps(float(d), max_steps) == window]
        if fits:
            return float(min(fits, key=lambda d: (abs(d - exact), -d)))
    raise ValueError(f"no fraction of {max_steps} steps keeps the last {window}")
