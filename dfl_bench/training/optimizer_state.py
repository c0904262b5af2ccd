"""The optimizer's state of each run checked finite: a gradient that float32
holds can still overflow the state the update reads (ADAM's second moment `exp_avg_sq` is the
squared gradient, inf above about 1.8e19 / sqrt(1 - beta2)), and then the update is zero or
NaN: a run that does not train. `RunsModule` retires such a run with `nonfinite_state_reason`
on its logging steps and at the last step (module.py), one host sync each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor, nn


def run_parameters(module: nn.Module, runs: int, grouped: bool) -> list[tuple[Tensor, int | None]]:
    """Each trained parameter with its run: own networks (`module.run_nets`) one run each;
    the grouped layout's parameters hold every run, run r at index r of their first dimension
    (None)."""
    if grouped:
        return [(p, None) for p in module.grouped_net.parameters() if p.requires_grad]
    return [(p, r) for r in range(runs) for p in module.run_nets[r].parameters() if p.requires_grad]


def nonfinite_state(
    optimizer: Any, params: Sequence[tuple[Tensor, int | None]], runs: int
) -> list[str | None]:
    """Per run, the first optimizer state key (`exp_avg`, `exp_avg_sq`, `momentum_buffer`, ...)
    whose tensor holds a NaN or inf for one of its parameters, or None; one host sync."""
    optimizer = getattr(optimizer, "optimizer", optimizer)  # a LightningOptimizer's own
    names: list[tuple[str, int | None]] = []
    peaks: list[Tensor] = []  # per state tensor: its largest |value| (NaN where it holds one)
    for param, run in params:
        for key, value in optimizer.state.get(param, {}).items():
            same = isinstance(value, Tensor) and value.shape == param.shape  # per element
            if same and value.is_floating_point():
                names.append((key, run))
                peak = value.abs().reshape(runs, -1).amax(1) if run is None else value.abs().amax()
                peaks.append(peak.expand(runs))
    if not peaks:
        return [None] * runs
    finite = torch.stack(peaks).isfinite()  # (state tensors, runs)
    found: list[str | None] = [None] * runs
    for (key, run), row in zip(names, finite.tolist(), strict=True):
        for r in range(runs) if run is None else (run,):
            if not row[r] and found[r] is None:
                found[r] = key
    return found
