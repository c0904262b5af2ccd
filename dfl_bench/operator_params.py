"""The operators' parameters and their valid ranges, read without torch: `Param`, with which
the registry declares each operator's (dfl_bench/operators/registry.py), `checked`, the one
check of an operator's parameters (`build`'s), and the registry's table of them
(operator_params.json, written by `python -m dfl_bench.operators` and held to the registry by
tests/operators/test_operators_registry.py), by which a run record's operator config is held to
what a job builds (`refusal`; lifecycle/record_config.py).

    >>> refusal("tnorm", {"name": "yager", "p": -3.0, "eps": 0.0})
    "tnorm 'yager': p=-3.0 is out of range; p must be a number in (0, inf)"
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from dfl_bench.untrusted import read_json

TABLE = Path(__file__).with_name("operator_params.json")  # kind -> name -> parameter -> fields
# Each operator that at a value of its parameter p is another registered operator bit for bit,
# in value and gradient (tests/operators/test_operators_same.py holds each): kind -> (name, p)
# -> the one spelling (name, its p or None). Frank p = 1, Hamacher p = 1 and Schweizer-Sklar
# p = 0 compute one operator, the product's but for the derivative at max(x, EPS) of their
# t-norm (families._TNorm; `product` and its duals take it at x): the first name alphabetically
# spells it. Their aggregators are `product` and `probabilistic_sum` themselves; `mae` and
# `rmse` are generalized_mean_error at p = 1 and 2 (registry.alias). Schweizer-Sklar p = 1 (and
# its _r implication) is Lukasiewicz in exact arithmetic only: value or gradient differ where
# a + b is near 1 or an argument is near 0, so it is not listed (the test holds them apart).
_PRODUCT_FAMILIES = {("hamacher", 1.0): ("frank", 1.0), ("schweizer_sklar", 0.0): ("frank", 1.0)}
SAME: dict[str, dict[tuple[str, float], tuple[str, float | None]]] = {
    "tnorm": _PRODUCT_FAMILIES,
    "tconorm": _PRODUCT_FAMILIES,
    "implication": {
        (f"{name}_{how}", p): (f"{canon}_{how}", q)
        for (name, p), (canon, q) in _PRODUCT_FAMILIES.items()
        for how in ("s", "r")
    },
    "forall": {
        ("frank", 1.0): ("product", None),
        ("schweizer_sklar", 0.0): ("product", None),
        ("generalized_mean_error", 1.0): ("mae", None),
        ("generalized_mean_error", 2.0): ("rmse", None),
    },
    "exists": {
        ("frank", 1.0): ("probabilistic_sum", None),
        ("schweizer_sklar", 0.0): ("probabilistic_sum", None),
    },
}


@dataclass(frozen=True)
class Param:
    """A parameter of an operator: its default and valid range (or valid choices).

    A numeric parameter with default None is optional: None passes through unchecked.
    """

    default: Any
    low: float | None = None
    high: float | None = None
    low_inclusive: bool = False
    high_inclusive: bool = True
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None
    also: tuple[float, ...] = ()  # single values valid outside the range (Hamacher's p = 0)
    examples: tuple[float, ...] = ()  # where the law tests check it: each side of named limits

    def valid_choices(self) -> tuple[str, ...] | None:
        return self.choices() if callable(self.choices) else self.choices

    def fields(self) -> dict[str, Any]:
        """What `Param(**fields)` takes back, as JSON (its choices listed; no law examples)."""
        options = self.valid_choices()
        return {
            "default": self.default,
            "low": self.low,
            "high": self.high,
            "low_inclusive": self.low_inclusive,
            "high_inclusive": self.high_inclusive,
            "choices": None if options is None else list(options),
            "also": list(self.also),
        }

    def describe(self) -> str:
        options = self.valid_choices()
        if options is not None:
            return f"one of {list(options)}"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "[" if self.low_inclusive and self.low is not None else "("
        right = "]" if self.high_inclusive and self.high is not None else ")"
        optional = " or None" if self.default is None else ""
        also = "".join(f" or {x:g}" for x in self.also)
        return f"a number in {left}{lo}, {hi}{right}{also}{optional}"

    def check(self, kind: str, name: str, key: str, value: Any) -> Any:
        """Return the validated value, or raise a ValueError naming what `key` must be."""
        if value is None and self.default is None:
            return None
        where = f"{kind} '{name}': {key}={value!r}"
        options = self.valid_choices()
        if options is not None:
            if value not in options:
                raise ValueError(f"{where} is not valid; {key} must be {self.describe()}")
            return value
        if isinstance(value, bool):
            raise ValueError(f"{where} is a boolean, not a number; {key} must be {self.describe()}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{where} is not valid; {key} must be {self.describe()}") from None
        too_low = self.low is not None and (
            number < self.low or (number == self.low and not self.low_inclusive)
        )
        too_high = self.high is not None and (
            number > self.high or (number == self.high and not self.high_inclusive)
        )
        if number in self.also:
            return number
        if too_low or too_high or not math.isfinite(number):
            raise ValueError(f"{where} is out of range; {key} must be {self.describe()}")
        return number


def checked(
    kind: str,
    name: str,
    params: Mapping[str, Any],
    declared: Mapping[str, Param],
    fixed: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`params` given to operator `name` of `kind`, which takes `declared` (an alias: its
    target's, `fixed` among them), each checked, defaults filled in; a ValueError naming an
    unknown parameter or a value out of its range."""
    fixed = fixed or {}
    unknown = sorted(set(params) - set(declared))
    if unknown:
        valid = sorted(set(declared) - set(fixed)) or "none"
        raise ValueError(f"{kind} '{name}' has no parameter {unknown}; valid parameters: {valid}")
    bound = {**params, **fixed}
    return {key: p.check(kind, name, key, bound.get(key, p.default)) for key, p in declared.items()}


@cache
def table() -> dict[str, Any]:
    """The registry's parameters (TABLE): kind -> name -> parameter -> `Param.fields`."""
    return read_json(TABLE)


def refusal(kind: str, entry: Mapping[str, Any]) -> str | None:
    """Why `entry` ({"name": ..., **params}, a config's `kind`) is no operator a job builds: an
    unknown name or parameter, a value out of its range (`checked`), another operator's
    spelling (`same_operator`), or None."""
    names = table().get(kind, {})
    name = entry.get("name")
    if not isinstance(name, str) or name not in names:
        return f"unknown {kind} {name!r}; valid choices: {sorted(names)}"
    declared = {key: param_of(fields) for key, fields in names[name].items()}
    try:
        values = checked(kind, name, {k: v for k, v in entry.items() if k != "name"}, declared)
    except ValueError as err:
        return str(err)
    why = same_operator(kind, entry)
    if why is not None:
        return why
    if "base" in declared and values.get("p") is not None:  # implications.sigmoidal's rule
        base = values["base"]
        if "p" not in names[base]:
            return f"{kind} {name!r}: base {base!r} has no parameter p"
        return refusal(kind, {"name": base, "p": values["p"]})
    return None


def same_operator(kind: str, entry: Mapping[str, Any]) -> str | None:
    """Why `entry` (a config's `kind`, its values in range) is another spelling of an operator
    (SAME: `tnorm=hamacher tnorm.p=1` is `tnorm=frank tnorm.p=1`; a sigmoidal implication's
    base and p alike), the same run under another hash; or None. A job (guards.check_config)
    and a run record's config (`refusal`) both refuse it.

    >>> same_operator("forall", {"name": "frank", "p": 1})
    'forall=frank forall.p=1 is forall=product; write that'
    """
    name, key = entry.get("name"), kind
    if name == "sigmoidal":
        name, key = entry.get("base"), f"{kind}.base"
    p = _number_of(entry.get("p"))
    if not isinstance(name, str) or (name, p) not in SAME.get(kind, {}):
        return None
    canon, q = SAME[kind][(name, p)]
    spelling = f"{key}={canon}" + ("" if q is None else f" {kind}.p={q:g}")
    return f"{key}={name} {kind}.p={p:g} is {spelling}; write that"


def _number_of(value: Any) -> float | None:
    """`value` as the number `Param.check` takes it for (text too), or None (a boolean, none)."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def param_of(fields: Mapping[str, Any]) -> Param:
    """The `Param` of its `fields` (JSON: lists for tuples)."""
    choices = fields.get("choices")
    also = tuple(fields.get("also", ()))
    return Param(**{**fields, "choices": None if choices is None else tuple(choices), "also": also})
