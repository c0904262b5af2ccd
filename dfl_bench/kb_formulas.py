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
import struct
from collections.abc import Mapping, Sequence
from typing import Any

# The formulas (families) of each knowledge base the package registers (logic/*_kb.py), in order.
FORMULAS: dict[str, tuple[str, ...]] = {
    "same": ("same/1", "same/2", "same/3"),
    "sum9": ("sum9/1", "sum9/2"),
    "both": ("same/1", "same/2", "same/3", "sum9/1", "sum9/2"),
}
# Of each formula (family) of FORMULAS: how many formulas it holds at kb.scope=formula (one per
# digit, else 1; one at scope family) and its divisor at kb.scale=mean (the number of families of
# its own knowledge base), as logic.KBS registers them (a test holds them to it): `dfl_loss`
# weighs a family by w / (divisor * formulas) at scale mean and by w at scale sum.
SIZES: dict[str, tuple[int, int]] = {
    "same/1": (10, 3),
    "same/2": (10, 3),
    "same/3": (1, 3),
    "sum9/1": (1, 2),
    "sum9/2": (1, 2),
}
# Of each formula of FORMULAS: the operator kinds (kinds.KINDS) its evaluation calls, as
# logic.formulas.connectives walks its tree (a test holds them to it); `uncalled` reads them.
CONNECTIVES: dict[str, frozenset[str]] = {
    "same/1": frozenset({"forall", "tnorm", "implication"}),
    "same/2": frozenset({"forall", "tnorm", "implication"}),
    "same/3": frozenset({"forall", "implication"}),
    "sum9/1": frozenset({"forall", "exists"}),
    "sum9/2": frozenset({"forall", "tnorm", "tconorm", "implication"}),
}
# The connective of a formula that calls each operator kind (logic.formulas.CALLS).
CALLED_BY = {
    "tnorm": "a conjunction (& or AndOver)",
    "tconorm": "a disjunction (| or OrOver)",
    "implication": "an implication (>>)",
    "forall": "a universal quantifier (Forall)",
    "exists": "an existential quantifier (Exists)",
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


def uncalled(kb: str, formulas: Any) -> dict[str, str]:
    """Each operator kind that no formula of `kb` (of FORMULAS) which `formulas` selects calls
    (CONNECTIVES), and why, in one line: every value of it trains the same numbers.

    >>> uncalled("same", [3])["tnorm"]
    'kb=same kb.formulas=[3] reads no tnorm: no formula of same/3 has a conjunction (& or AndOver)'
    """
    names = chosen(kb, formulas, None, FORMULAS[kb])[0]
    called = set().union(*(CONNECTIVES[name] for name in names))
    selection = f"kb={kb}" + ("" if formulas is None else f" kb.formulas={list(formulas)}")
    return {
        kind: f"{selection} reads no {kind}: no formula of {', '.join(names)} has {noun}"
        for kind, noun in CALLED_BY.items()
        if kind not in called
    }


def check_weight(name: str, weight: Any) -> None:
    """The weight of formula `name`: a finite number >= 0 (0 adds nothing to the loss; a
    configuration leaves the formula out instead, `check_no_zero`)."""
    ok = isinstance(weight, int | float) and not isinstance(weight, bool)
    if not ok or not math.isfinite(weight) or weight < 0:
        raise ValueError(
            f"kb.weights: the weight of {name} must be a finite number >= 0, got {weight!r}"
        )


def check_one_spelling(
    kb: str, formulas: Any, weights: Any, valid: Sequence[str], w_dfl: Any = None
) -> None:
    """A configuration's ablation (`chosen`) in its one spelling, so that one run has one config
    hash: its formulas each once, in the knowledge base's order, as `spelled`, not every one
    (null is all); its weights keyed as `spelled`, not empty, none on a formula it leaves out,
    none 1 (null is 1 each), none 0 but all (`check_no_zero`), and no factor that `kb.w_dfl`
    (given as `w_dfl`) would take (`check_no_factor`)."""
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
    check_float32_weights(weighed, w_dfl)
    keys = {formula_name(kb, key, valid): key for key in weights or {}}
    read = {keys.get(name, spelled(kb, name)): weighed.get(name, 1.0) for name in names}
    check_no_zero(weights, {spelled(kb, name): weighed.get(name, 1.0) for name in names}, w_dfl)
    check_no_factor(weights, read, w_dfl)


def check_no_zero(weights: Any, read: Mapping[int | str, float], w_dfl: Any) -> None:
    """No formula weighed 0 among `read` (each formula the loss reads, spelled, and its weight)
    where another weighs more: its term of the loss is 0 and its gradient 0, so the network
    trains as with `kb.formulas` without it (that formula's place in the mean's divisor is kept
    either way, logic/kb.dfl_loss), the same run under another hash; refused naming the
    formulas and weights to write, with their factor in `kb.w_dfl` (`check_no_factor`). Every
    weight 0 is check_no_factor's (kb.w_dfl=0); a w_dfl of 0 reads no weight and passes here.

    >>> check_no_zero({1: 0}, {1: 0, 2: 1.0, 3: 1.0}, 10.0)
    Traceback (most recent call last):
    ...
    ValueError: kb.weights={1: 0} is kb.formulas=[2, 3]; write that
    """
    kept = {key: weight for key, weight in read.items() if weight != 0}
    if len(kept) in (0, len(read)) or (_number(w_dfl) and w_dfl == 0):
        return
    factor = min(kept.values())
    rest = _normal_form(kept, factor)
    named = any(weight != 0 for weight in (weights or {}).values())
    scaled = _held(w_dfl * factor) if _number(w_dfl) else f"(kb.w_dfl times {_shown(factor)})"
    spelling = f"kb.formulas={list(kept)}" + (f" kb.w_dfl={scaled}" if factor != 1 else "")
    if named or factor != 1:
        spelling += f" kb.weights={rest or 'null'}"
    given = f"kb.weights={_shown(weights)}"
    _check_held(given, spelling, [*rest.values(), w_dfl * factor if _number(w_dfl) else 1])
    raise ValueError(f"kb.weights={_shown(weights)} is {spelling}; write that")


def check_no_factor(weights: Any, read: Mapping[Any, float], w_dfl: Any = None) -> None:
    """`read`, the weight of each formula the loss reads by its key (1 where `weights` names
    none), with its smallest nonzero weight 1: the DFL loss is w_dfl times their weighed sum, so
    weights c times those are `kb.w_dfl` times c with these (every one 0: a loss of 0,
    kb.w_dfl=0), the same run under another hash. A w_dfl of 0 reads no weight (no DFL loss)
    and passes here.

    >>> check_no_factor({1: 2, 2: 2, 3: 4}, {1: 2, 2: 2, 3: 4}, 10.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: kb.weights={1: 2, 2: 2, 3: 4} is kb.w_dfl=20 kb.weights={3: 2} spelled another ...
    """
    factor = min((weight for weight in read.values() if weight != 0), default=0.0)
    if factor == 1 or (_number(w_dfl) and w_dfl == 0):
        return
    rest = _normal_form(read, factor) if factor else {}
    scaled = f"={_held(w_dfl * factor)}" if _number(w_dfl) else f" times {_shown(factor)}"
    spelling = f"kb.w_dfl{scaled} kb.weights={rest or 'null'}"
    given = f"kb.weights={_shown(weights)}"
    _check_held(given, spelling, [*rest.values(), w_dfl * factor if _number(w_dfl) else 1])
    raise ValueError(f"kb.weights={_shown(weights)} is {spelling} spelled another way; write that")


def _check_held(
    given: str,
    spelling: str,
    values: Sequence[float],
    fix: str = "weigh the formulas within float32's range of each other",
) -> None:
    """A refusal, saying `fix`, where float32 rounds one of `values` (the w_dfl and weights of
    `spelling`, which the option `given` is) to 0 or inf: that spelling is refused too
    (`check_w_dfl`, `check_float32_weights`)."""
    for value in values:
        if _edge(value):
            raise ValueError(
                f"{given} is {spelling}, where float32 rounds {value!r} to {_edge(value)}: {fix}"
            )


def _normal_form(read: Mapping[Any, float], factor: float) -> dict[Any, int | float]:
    """Each weight of `read` (by key) over `factor`, as `_held` spells it, but those that are
    1 (null is 1 each): the weights of check_no_factor's normal form."""
    ratios = {key: _held(weight / factor) for key, weight in read.items()}
    return {key: ratio for key, ratio in ratios.items() if ratio != 1}


def _held(value: float) -> int | float:
    """`value` as a spelling that `check_w_dfl` and `check_float32_weights` take: float32's
    shortest (`float32_shortest`), a whole float as an integer (`_shown`); as given where float32
    rounds it to 0 or inf (which `_check_held` refuses)."""
    return _shown(value if _edge(value) else float32_shortest(value))


def check_scope(kb: str, options: Mapping[str, Any]) -> None:
    """`kb.scope=family`, the one spelling where every family `kb.formulas` selects holds one
    formula at either scope (SIZES: sum9/1, sum9/2, same/3): scope formula is then the same
    loss under another hash (conf/kb/sum9.yaml).

    >>> check_scope("same", {"scope": "formula", "formulas": [3]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: kb.scope=formula is kb.scope=family for kb=same kb.formulas=[3] (same/3: one ...
    """
    if options.get("scope") != "formula":
        return
    formulas = options.get("formulas")
    names = chosen(kb, formulas, None, FORMULAS[kb])[0]
    if any(SIZES[name][0] != 1 for name in names):
        return
    selection = f"kb={kb}" + ("" if formulas is None else f" kb.formulas={list(formulas)}")
    raise ValueError(
        f"kb.scope=formula is kb.scope=family for {selection} ({', '.join(names)}: one formula "
        "each at either scope): write kb.scope=family"
    )


def check_scale(kb: str, options: Mapping[str, Any]) -> None:
    """`kb.scale=mean`, the one spelling of a DFL loss: `dfl_loss` weighs a family f of weight
    u_f by u_f at sum and by u_f / (divisor * formulas) at mean (SIZES), so the loss at sum at
    w_dfl is the loss at mean at kb.w_dfl=w_dfl*c with weights u_f * divisor * formulas / c, c
    the least of these (check_no_factor's normal form): refused naming that spelling, where
    float32 holds it (`_check_held`). A w_dfl of 0 reads no scale and passes here.

    >>> check_scale("sum9", {"scale": "sum", "w_dfl": 10.0})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: kb.scale=sum is kb.w_dfl=20 at kb.scale=mean (scope family: 2 families); write ...
    >>> check_scale("both", {"scale": "sum", "w_dfl": 10.0})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: kb.scale=sum is kb.w_dfl=20 kb.weights={'same/1': 1.5, 'same/2': 1.5, ...
    """
    w_dfl, weights = options.get("w_dfl"), options.get("weights")
    scope = options.get("scope", "family")
    if options.get("scale") != "sum" or not _number(w_dfl) or w_dfl == 0:
        return
    names, weighed = chosen(kb, options.get("formulas"), weights, FORMULAS[kb])
    keys = {formula_name(kb, key, FORMULAS[kb]): key for key in weights or {}}
    sizes = {name: (SIZES[name][0] if scope == "formula" else 1, SIZES[name][1]) for name in names}
    at_mean = {
        keys.get(name, spelled(kb, name)): weighed.get(name, 1.0) * size * divisor
        for name, (size, divisor) in sizes.items()
    }
    factor = min((weight for weight in at_mean.values() if weight != 0), default=1.0)
    rest = _normal_form(at_mean, factor)
    spelling = f"kb.w_dfl={_held(w_dfl * factor)}"
    if rest or weights:
        spelling += f" kb.weights={rest or 'null'}"
    spelling += " at kb.scale=mean"
    fix = "write a smaller kb.w_dfl, or weights nearer each other"
    _check_held("kb.scale=sum", spelling, [*rest.values(), w_dfl * factor], fix)
    raise ValueError(f"kb.scale=sum is {spelling} (scope {scope}: {_divisors(sizes)}); write that")


def _divisors(sizes: Mapping[str, tuple[int, int]]) -> str:
    """What kb.scale=mean divides each family of `sizes` (formulas, divisor) by, as words: "3
    families of 10 formulas", naming the families where they differ."""
    told = {
        name: f"{divisor} families" + (f" of {size} formulas" if size != 1 else "")
        for name, (size, divisor) in sizes.items()
    }
    if len(set(told.values())) == 1:
        return next(iter(told.values()))
    groups = {said: [name for name in told if told[name] == said] for said in told.values()}
    return "; ".join(f"{', '.join(names)}: {said}" for said, names in groups.items())


# float32, in which a run weighs its DFL loss, rounds a number of at most 2**-150 (half its
# smallest subnormal, a tie to even) to 0: no DFL gradient, whatever the operators.
FLOAT32_ZERO = 2.0**-150


def check_w_dfl(w_dfl: Any) -> None:
    """A `kb.w_dfl` that float32 holds: none but 0 that it rounds to 0 (FLOAT32_ZERO), under
    which every operator and knowledge base trains one network under many hashes, none it rounds
    to inf, and each as float32's shortest spelling (`float32_shortest`): a run weighs its
    float32 DFL loss by float32(w_dfl), so 10.0000001 trains as 10.0 under another hash.

    >>> check_w_dfl(1e-50)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: kb.w_dfl=1e-50 is 0 in float32: write kb.w_dfl=0 (no DFL loss) or a weight of at ...
    >>> check_w_dfl(10.0000001)
    Traceback (most recent call last):
    ...
    ValueError: kb.w_dfl=10.0000001 is 10.0 in float32: write kb.w_dfl=10.0
    """
    if not _number(w_dfl) or w_dfl == 0:
        return
    if 0 < w_dfl <= FLOAT32_ZERO:
        raise ValueError(
            f"kb.w_dfl={w_dfl!r} is 0 in float32: write kb.w_dfl=0 (no DFL loss) or a weight of "
            "at least 1e-45"
        )
    if _edge(w_dfl) == "inf":
        raise ValueError(f"kb.w_dfl={w_dfl!r} is inf in float32")
    if (shortest := float32_shortest(w_dfl)) != w_dfl:
        raise ValueError(
            f"kb.w_dfl={w_dfl!r} is {shortest!r} in float32: write kb.w_dfl={shortest!r}"
        )


def check_float32_weights(weighed: Mapping[str, float], w_dfl: Any) -> None:
    """No formula's weight (in `weighed`, by name) that float32 rounds to 0 or inf, alone or
    times a nonzero `w_dfl` (dfl_loss weighs a float32 sum by it, DFLRun that by w_dfl): a
    weight that is 0 there is the formula left out (`check_no_zero`), one that is inf no loss.

    >>> check_float32_weights({"same/1": 1e-50}, 10.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: kb.weights: same/1's weight 1e-50 (times kb.w_dfl=10.0) is 0 in float32: leave ...
    """
    scale = w_dfl if _number(w_dfl) and w_dfl != 0 else 1.0
    for name, weight in weighed.items():
        edge = _edge(weight) or _edge(weight * scale)
        if weight != 0 and edge:
            fix = "leave it out of kb.formulas" if edge == "0" else "weigh it less"
            raise ValueError(
                f"kb.weights: {name}'s weight {weight!r} (times kb.w_dfl={w_dfl!r}) is {edge} in "
                f"float32: {fix}"
            )
        if (shortest := float32_shortest(weight)) != weight:
            fix = "leave it out (1 is every formula's)" if shortest == 1 else f"write {shortest!r}"
            raise ValueError(
                f"kb.weights: {name}'s weight {weight!r} is {shortest!r} in float32: {fix}"
            )


def float32_shortest(value: float) -> float:
    """The decimal of fewest digits that float32 rounds as it rounds `value` (numpy's repr of a
    float32: 10.0000001 is 10.0, 0.1 is 0.1), for a `value` float32 holds (`_edge`)."""
    rounded = _float32(value)
    for digits in range(1, 9):  # 9 significant digits give every float32 back
        if _float32(shortest := float(f"{rounded:.{digits}g}")) == rounded:
            return shortest
    return float(f"{rounded:.9g}")


def _float32(value: float) -> float:
    """`value` rounded to float32 (an OverflowError, or inf, past its range)."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


def _edge(value: float) -> str | None:
    """ "0" or "inf" where float32 rounds a nonzero finite `value` to that, else None."""
    try:
        rounded = _float32(value)
    except OverflowError:  # how some Pythons pack a number float32 rounds to inf
        return "inf"
    if math.isinf(rounded):
        return "inf"
    return "0" if value != 0 and rounded == 0 else None


def _number(value: Any) -> bool:
    """Whether `value` is a finite number (not true or false)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: Any) -> Any:
    """`value` (a weight, or a mapping of weights) with a whole float shown as an integer (below
    2**53, whose integers a float holds each: 1e+40 stays 1e+40)."""
    if isinstance(value, Mapping):
        return {k: _shown(v) for k, v in value.items()}
    whole = isinstance(value, float) and value.is_integer() and abs(value) < 2**53
    return int(value) if whole else value


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
