"""A knowledge base's ablation (`kb.formulas`, `kb.weights`: which of its formulas the loss
reads, and each one's weight), checked without torch: `logic.build_kb` chooses them among a
registered knowledge base's families with `chosen`, and a job's task and a run record's config
among FORMULAS, the package's own knowledge bases' (tasks/values.check_kb_options; a test holds
the table to logic.KBS), so both refuse one value alike.

    >>> chosen("same", [1, "same/3"], {"1": 2.0}, FORMULAS["same"])
    (['same/1', 'same/3'], {'same/1': 2.0})
    >>> chosen("same", ["nosuch"], None, FORMULAS["same"])
    Traceback (most recent call last):
    ...
    ValueError: unknown formula 'nosuch' of 'same'; valid choices: ['same/1', 'same/2', 'same/3']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

# The formulas (families) of each knowledge base the package registers (logic/*_kb.py), in order.
FORMULAS: dict[str, tuple[str, ...]] = {
    "same": ("same/1", "same/2", "same/3"),
    "sum9": ("sum9/1", "sum9/2"),
    "both": ("same/1", "same/2", "same/3", "sum9/1", "sum9/2"),
}


def formula_name(kb: str, key: Any, valid: Sequence[str]) -> str:
    """The formula of knowledge base `kb` that `key` names, by number (1, "1") or by name
    ("same/1"), among `valid`; else a ValueError naming the valid ones."""
    if isinstance(key, str) and key.isdigit():
        key = int(key)
    name = f"{kb}/{key}" if isinstance(key, int) else key
    if name not in valid:
        numbered = any(v.startswith(f"{kb}/") for v in valid)
        hint = "" if numbered else f" (give names for {kb!r})"
        raise ValueError(f"unknown formula {key!r} of {kb!r}{hint}; valid choices: {list(valid)}")
    return name


def chosen(
    kb: str, formulas: Any, weights: Any, valid: Sequence[str]
) -> tuple[list[str], dict[str, float]]:
    """The formulas of `kb` (among `valid`) that `formulas` selects (None: all; else a list, at
    least one) and the weight `weights` gives each (None: 1 each; else a mapping of formulas to
    finite numbers >= 0), each a ValueError naming the key where it is not one."""
    if formulas is not None and (isinstance(formulas, str) or not isinstance(formulas, Sequence)):
        raise ValueError(f"kb.formulas must be a list of formulas (e.g. [1, 2]), got {formulas!r}")
    names = list(valid) if formulas is None else [formula_name(kb, k, valid) for k in formulas]
    if not names:
        raise ValueError(f"select at least one formula of {kb!r}; valid choices: {list(valid)}")
    if not isinstance(weights or {}, Mapping):
        raise ValueError(
            f"kb.weights must map formulas to weights (e.g. {{1: 2.0}}), got {weights!r}"
        )
    weighed: dict[str, float] = {}
    for key, weight in (weights or {}).items():
        name = formula_name(kb, key, valid)
        if name in weighed:
            raise ValueError(f"kb.weights={weights!r} weighs {name} twice: give it one weight"
                             f" (key {spelled(kb, name)!r})")  # fmt: skip
        check_weight(name, weight)
        weighed[name] = weight
    return names, weighed


def check_weight(name: str, weight: Any) -> None:
    """The weight of formula `name`: a finite number >= 0 (0 leaves it out of the loss)."""
    ok = isinstance(weight, int | float) and not isinstance(weight, bool)
    if not ok or not math.isfinite(weight) or weight < 0:
        raise ValueError(
            f"kb.weights: the weight of {name} must be a finite number >= 0, got {weight!r}"
        )


def check_one_spelling(kb: str, formulas: Any, weights: Any, valid: Sequence[str]) -> None:
    """A configuration's ablation (`chosen`) in its one spelling, so that one run has one config
    hash: its formulas each once, in the knowledge base's order, as `spelled`, not every one
    (null is all); its weights keyed as `spelled`, not empty, none on a formula it leaves out,
    none 1 (null is 1 each), not one weight on every formula it reads (`check_not_uniform`)."""
    names, weighed = chosen(kb, formulas, weights, valid)
    ordered = [spelled(kb, name) for name in valid if name in names]
    if formulas is not None and list(formulas) != ordered:
        raise ValueError(f"kb.formulas={formulas!r} names a formula twice, out of order or not as"
                         f" {kb!r} numbers it: give {ordered}")  # fmt: skip
    if formulas is not None and len(ordered) == len(valid):
        raise ValueError(
            f"kb.formulas={formulas!r} selects every formula of {kb!r}: leave it null (all)"
        )
    check_weight_keys(kb, weights, valid)
    if weights is not None and not weighed:
        raise ValueError("kb.weights={} weighs no formula: leave it null (1 each)")
    for name, weight in weighed.items():
        if name not in names:
            raise ValueError(f"kb.weights weighs {name}, which kb.formulas leaves out: drop it")
        if weight == 1:
            raise ValueError(f"kb.weights: {name}'s weight 1 is every formula's: leave it out")
    check_not_uniform(weights, names, weighed)


def check_not_uniform(weights: Any, names: Sequence[str], weighed: Mapping[str, float]) -> None:
    """Not one weight c on each of the formulas `names` the loss reads: the loss (w_dfl times
    the weighed sum of their losses) is then `kb.w_dfl` times c with no weights."""
    if set(weighed) == set(names) and len(set(weighed.values())) == 1:
        factor = next(iter(weighed.values()))
        raise ValueError(f"kb.weights={weights!r} gives every formula it reads weight {factor!r}:"
                         f" leave it null and scale kb.w_dfl by {factor!r} instead")  # fmt: skip


def spelled(kb: str, name: str) -> int | str:
    """Formula `name`'s one spelling in `kb`'s ablation: its number where `kb` numbers its
    formulas (same/3 in `same`: 3), else its name (same/3 in `both`)."""
    number = name.removeprefix(f"{kb}/")
    return int(number) if number != name and number.isdigit() else name


def check_weight_keys(kb: str, weights: Any, valid: Sequence[str]) -> None:
    """`kb.weights` (taken by `chosen`) keyed as `spelled`, a number as itself or its digits (a
    record's JSON keys are text; both hash alike): {1: 5.0}, not {same/1: 5.0}."""
    keys = {key: spelled(kb, formula_name(kb, key, valid)) for key in weights or {}}
    if any(str(key) != str(number) for key, number in keys.items()):
        fixed = {keys[key]: value for key, value in weights.items()}
        raise ValueError(f"kb.weights={weights!r} names a formula not as {kb!r} numbers it: give"
                         f" {fixed}")  # fmt: skip
