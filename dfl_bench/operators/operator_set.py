"""The operators one DFL configuration uses (T, S, I, A, E and the strong negation N)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from torch import Tensor

from dfl_bench.operators.registry import KINDS, build


def negation(a: Tensor) -> Tensor:
    """Strong negation N(a) = 1 - a (Section 3)."""
    return 1.0 - a


@dataclass(frozen=True)
class OperatorSet:
    """One operator per kind, built and validated; `configs` keeps each kind's config
    ({"name": ..., **params}) it was built from."""

    tnorm: Callable
    tconorm: Callable
    implication: Callable
    forall: Callable
    exists: Callable
    configs: Mapping[str, Mapping[str, Any]]
    negation: Callable = negation

    @classmethod
    def from_config(cls, cfg: Mapping[str, Mapping[str, Any]]) -> OperatorSet:
        """Build from `{kind: {"name": ..., **params}}` for every kind (a Hydra config works)."""
        missing = [k for k in KINDS if k not in cfg]
        if missing:
            raise ValueError(
                f"operator config lacks {missing}; it needs every kind of {list(KINDS)}"
            )
        configs = {k: dict(cfg[k]) for k in KINDS}
        built = {}
        for kind, entry in configs.items():
            params = {k: v for k, v in entry.items() if k != "name"}
            if "name" not in entry:
                raise ValueError(f"operator config for {kind} has no 'name'")
            built[kind] = build(kind, entry["name"], **params)
        return cls(**built, configs=configs)
