"""Timing primitives: synchronized wall clock, interleaved repeats, robust summaries, fits."""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence

import torch

from dfl_bench import outputs


def synchronize(device: torch.device) -> None:
    """Wait for queued kernels on CUDA so the clock measures finished work (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn: Callable[[], object], device: torch.device) -> float:
    """Seconds one call of `fn` takes, synchronized before and after."""
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - start


def interleaved(
    fns: Mapping[str, Callable[[], object]],
    repeats: int,
    warmup: int,
    device: torch.device,
    every: Mapping[str, int] | None = None,
) -> dict[str, list[float]]:
    """Seconds per call of each function, timed round-robin so that load drifts hit all alike;
    a function with `every[name] = k` runs in every k-th round (and warm-up call) only."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got {repeats}, {warmup}")
    stride = {name: (every or {}).get(name, 1) for name in fns}
    if min(stride.values(), default=1) < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    for name, fn in fns.items():
        for _ in range(-(-warmup // stride[name])):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for i in range(repeats):
        for name, fn in fns.items():
            if i % stride[name] == 0:
                samples[name].append(timed(fn, device))
    return samples


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    """Median, quartiles and IQR in milliseconds of repeated timings."""
    ms = sorted(1000.0 * s for s in seconds)
    if len(ms) == 1:
        q1 = q3 = ms[0]
    else:
        q1, _, q3 = statistics.quantiles(ms, n=4, method="inclusive")
    return {
        "median_ms": statistics.median(ms),
        "q1_ms": q1,
        "q3_ms": q3,
        "iqr_ms": q3 - q1,
        "n": len(ms),
    }


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log(y) against log(x): the exponent k of y ~ x^k."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError(f"need >= 2 paired points, got {len(xs)} and {len(ys)}")
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    return num / sum((a - mx) ** 2 for a in lx)


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages (other processes distort the timings)."""
    return [round(v, 2) for v in os.getloadavg()]


def refuse_low(prog: str, given: Mapping[str, tuple[int, int]]) -> None:
    """Each option's (value, least) checked before any timing: those below their least said
    in one line (`outputs.refused`) and SystemExit(2)."""
    low = [f"{key}={value} (at least {least})" for key, (value, least) in given.items()
           if value < least]  # fmt: skip
    if low:
        raise SystemExit(outputs.refused(prog, ValueError(f"too low: {', '.join(low)}")))
