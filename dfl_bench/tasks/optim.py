"""Optimizers: ADAM lr 0.001 (Section 9.3), SGD lr 0.01 momentum 0.5 (appendix experiments).

Their settings live once, in conf/optimizer/<name>.yaml (ADAM's `fused: true`: torch's fused
implementation, one kernel over all parameters, the same update about 2.5x faster than the
per-parameter loop on the CPU; `optimizer.fused=false` turns it off).
A budget may bring its own settings (conf/profile/<name>.yaml's `optimizer:`, composed over
the optimizer group's; a command-line `optimizer.<key>` wins over both). Two schedules, neither
set unless a config sets it: `cosine_final`, the learning rate falls along a half cosine from lr
to cosine_final * lr at the budget's last step; `warmup`, over its first `warmup` steps it rises
linearly to that (k/warmup of it at step k). The module steps them after every update and they
resume with the checkpoint. (Records made before 2026-12-06 that say `cosine_to` trained at a
constant rate: Lightning steps no schedule of a module that owns its update, and none stepped
it; lifecycle/migrate.py says so in them.)
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from dfl_bench.tasks.optimizer_values import (
    SCHEDULE,
    WARMUP,
    check_optimizer,
    group_defaults,
)

OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "adam": torch.optim.Adam,
    "sgd": torch.optim.SGD,
}


@dataclass(frozen=True)
class OptimizerSpec:
    """The optimizer a run trains with, checked once (`spec`): its class, its arguments (the
    group's settings under the config's) and its schedule."""

    name: str
    cls: type[torch.optim.Optimizer]
    kwargs: Mapping[str, Any]
    cosine_final: float | None = None
    warmup: int = 0

    def build(self, parameters: Iterable[torch.nn.Parameter]) -> torch.optim.Optimizer:
        """The optimizer on `parameters`."""
        return self.cls(parameters, **self.kwargs)

    def configure(
        self, parameters: Iterable[torch.nn.Parameter], max_steps: int
    ) -> torch.optim.Optimizer | dict[str, Any]:
        """What a LightningModule's `configure_optimizers` returns: the optimizer, with its
        per-step schedule when it has `cosine_final` or `warmup` (the factor of step k, from 0)."""
        optimizer = self.build(parameters)
        final, warmup = self.cosine_final, self.warmup
        if final is None and not warmup:
            return optimizer

        def factor(step: int) -> float:
            rise = min(1.0, (step + 1) / warmup) if warmup else 1.0
            if final is None:
                return rise
            cosine = 0.5 * (1.0 + math.cos(math.pi * min(step, max_steps) / max_steps))
            return rise * (final + (1.0 - final) * cosine)

        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}


def spec(cfg: Mapping[str, Any], max_steps: int | None = None) -> OptimizerSpec:
    """`{"name": ..., **params}` checked, the one place it is: its name, its schedule (a warmup
    shorter than `max_steps`, where known), its parameters (declared by the optimizer, of the
    types of their values in its yaml, else of their defaults, numbers finite, lr > 0, others
    >= 0, betas in [0, 1)), merged once over the group's yaml, then whatever the optimizer
    itself refuses; one ValueError line naming the key."""
    name = cfg.get("name")
    if not isinstance(name, str) or name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {name!r}; valid choices: {sorted(OPTIMIZERS)}")
    cls = OPTIMIZERS[name]
    params = {k: v for k, v in cfg.items() if k not in ("name", SCHEDULE, WARMUP)}
    defaults = {
        p.name: p.default for p in inspect.signature(cls).parameters.values() if p.name != "params"
    }
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise ValueError(
            f"optimizer {name!r} has no parameters {unknown}; valid choices: {list(defaults)}"
        )
    check_optimizer(cfg, max_steps, defaults)
    kwargs = {**group_defaults(name), **params}
    try:
        cls([torch.zeros(1, requires_grad=True)], **kwargs)
    except (ValueError, TypeError, RuntimeError) as err:
        raise ValueError(f"optimizer {name!r}: {err}") from None
    final, warmup = cfg.get(SCHEDULE), cfg.get(WARMUP)
    return OptimizerSpec(name, cls, kwargs, None if final is None else float(final), warmup or 0)


def gradient_reached(
    optimizer: torch.optim.Optimizer, params: Iterable[torch.nn.Parameter] | None = None
) -> bool | None:
    """Whether a nonzero gradient reached any parameter (of `params`, a run's in a stack; all the
    optimizer's if None): ADAM's moments (`exp_avg`, `exp_avg_sq`) stay exactly 0 until one does
    and then decay geometrically (0.9, 0.999 a step), so they are 0 at the end only when no
    gradient came in the last thousands of steps (a parameter that never had a gradient has no
    state); None for an optimizer without moments."""
    if "betas" not in optimizer.defaults:
        return None
    states = (
        optimizer.state.values()
        if params is None
        else [optimizer.state[p] for p in params if p in optimizer.state]
    )
    moments = [s[key] for s in states for key in ("exp_avg", "exp_avg_sq") if key in s]
    return any(bool((m != 0).any()) for m in moments)
