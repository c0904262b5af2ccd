"""The one operator table: Python (`build`) and Hydra (`conf/<kind>/<name>.yaml`) both read it.

An operator is registered where it is defined, with its parameters and their valid ranges::

    @register("tnorm", "yager", p=Param(2.0, low=0.0))
    def yager(a, b, p=2.0): ...

so adding an operator takes one function and one yaml file, `conf/<kind>/<name>.yaml` holding
`name` and the defaults (tests/operators/test_operators_registry.py fails naming the file to add).

Why the option files stay rather than being registered from this table (Hydra's ConfigStore
could): each file is where a user picks the operator, with its formula and section beside it;
some options deliberately differ from the function's defaults (`forall=log_product` averages
the logs, the scale at which w_DFL was tuned, while `build` gives the paper's sum), and
conf/recommended/ overlays Section 10.2's parameters file by file; a job's config and its hash
are the composed files, readable without importing Python. The test keeps them in sync.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dfl_bench.kinds import KINDS
from dfl_bench.operator_params import Param, checked

# The `eps` of the Yager operators: the authors' code's eps inside the p-th root
# (numerics.root_eps); 0, the default, is the paper's operator.
ROOT_EPS = Param(0.0, low=0.0, low_inclusive=True)


@dataclass(frozen=True)
class OperatorSpec:
    """A registered operator. `factory` operators return the callable when called with params.
    What it is defined from, which the law tests check: `dual`, a t-conorm's t-norm (Eq.
    "tconorm"); `s_of`, an S-implication's t-conorm (Eq. "s-impl"); `r_of`, an R-implication's
    t-norm (its residuum, Eq. "r-implication"); `folds`, the t-norm (forall) or t-conorm (exists)
    an aggregator folds (Table "aggregation")."""

    kind: str
    name: str
    fn: Callable
    params: dict[str, Param] = field(default_factory=dict)
    factory: bool = False
    dual: str | None = None
    s_of: str | None = None
    r_of: str | None = None
    folds: str | None = None
    derived: bool = False  # made from a t-norm by `register(..., duals=True)`, not written


_REGISTRY: dict[str, dict[str, OperatorSpec]] = {kind: {} for kind in KINDS}
_ALIASES: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {kind: {} for kind in KINDS}
_ORDER: dict[str, list[str]] = {kind: [] for kind in KINDS}  # names as registered (docs)


def _check_kind(kind: str) -> None:
    if kind not in _REGISTRY:
        raise ValueError(f"unknown operator kind {kind!r}; valid kinds: {list(KINDS)}")


def register(
    kind: str,
    name: str,
    *,
    factory: bool = False,
    dual: str | None = None,
    s_of: str | None = None,
    r_of: str | None = None,
    folds: str | None = None,
    duals: bool = False,
    **params: Param,
) -> Callable:
    """Decorator: register `fn` as operator `name` of `kind` with the given parameters and what
    it is defined from (OperatorSpec). A t-norm with `duals=True` also registers what the math
    defines from it alone (`register_duals`): its t-conorm `name` and S-implication `name_s`."""
    _check_kind(kind)
    if duals and kind != "tnorm":
        raise ValueError(f"duals=True derives a t-norm's t-conorm and S-implication, not {kind}'s")

    def decorate(fn: Callable) -> Callable:
        _add(OperatorSpec(kind, name, fn, dict(params), factory, dual, s_of, r_of, folds))
        if duals:
            register_duals(name)
        return fn

    return decorate


def _add(new: OperatorSpec) -> None:
    if new.name in _REGISTRY[new.kind] or new.name in _ALIASES[new.kind]:
        raise ValueError(f"{new.kind} '{new.name}' is registered twice")
    _REGISTRY[new.kind][new.name] = new
    _ORDER[new.kind].append(new.name)


def register_duals(tnorm: str) -> None:
    """Register t-norm `tnorm`'s N-dual t-conorm S(a, b) = 1 - T(1 - a, 1 - b) (Eq. "tconorm")
    under its name and its S-implication I(a, c) = S(1 - a, c) = 1 - T(a, 1 - c) (Eq. "s-impl")
    as `<tnorm>_s`, with its parameters: the operators the math defines from T alone. Its
    R-implication (the residuum sup{b : T(a, b) <= c}, Eq. "r-implication") has no closed form
    in general: write it by hand (`register("implication", ..., r_of=tnorm)`)."""
    t = spec("tnorm", tnorm)
    conorm = _from_tnorm(t, lambda T, a, b: 1.0 - T(1.0 - a, 1.0 - b))
    s_implication = _from_tnorm(t, lambda T, a, c: 1.0 - T(a, 1.0 - c))
    for fn, what in ((conorm, "t-conorm"), (s_implication, "S-implication")):
        fn.__module__, fn.__doc__ = t.fn.__module__, f"The {what} of t-norm {tnorm} (derived)."
    params = dict(t.params)
    _add(OperatorSpec("tconorm", tnorm, conorm, params, t.factory, dual=tnorm, derived=True))
    _add(OperatorSpec("implication", f"{tnorm}_s", s_implication, dict(params), t.factory,
                      s_of=tnorm, derived=True))  # fmt: skip


def _from_tnorm(t: OperatorSpec, combine: Callable[..., Any]) -> Callable[..., Any]:
    """An operator `combine(T, x, y)` of t-norm `t`, registered as `t` is: a factory of the
    t-norm's parameters where `t` is one, else a function of (x, y, **parameters)."""
    if t.factory:
        return lambda **kw: functools.partial(combine, t.fn(**kw))
    return lambda x, y, **kw: combine(functools.partial(t.fn, **kw), x, y)


def alias(kind: str, name: str, target: str, **fixed: Any) -> None:
    """Register `name` as `target` with some parameters fixed (e.g. mae = gme with p=1)."""
    _check_kind(kind)
    if name in _REGISTRY[kind] or name in _ALIASES[kind]:
        raise ValueError(f"{kind} '{name}' is registered twice")
    _ALIASES[kind][name] = (target, fixed)
    _ORDER[kind].append(name)


def choices(kind: str) -> list[str]:
    """All valid operator names of `kind` (aliases included), sorted."""
    _check_kind(kind)
    return sorted([*_REGISTRY[kind], *_ALIASES[kind]])


def examples(kind: str, name: str) -> list[dict[str, Any]]:
    """The parameter settings the law tests check operator `name` at: each example value of a
    parameter that has them (the others at their defaults), else its defaults ({})."""
    if name in _ALIASES[kind]:
        return [{}]
    return [
        {key: value} for key, param in spec(kind, name).params.items() for value in param.examples
    ] or [{}]


def markdown_table() -> str:
    """The table of docs/operators.md: per kind, its names in registration order (the paper's,
    then the families beyond it), each with its parameters (`yager (p)`)."""
    lines = ["| kind | names |", "|---|---|"]
    for kind in KINDS:
        names = []
        beyond = [n for n in _ORDER[kind] if spec(kind, n).fn.__module__.endswith(".families")]
        for name in [*(n for n in _ORDER[kind] if n not in beyond), *beyond]:
            params = [] if name in _ALIASES[kind] else list(_REGISTRY[kind][name].params)
            names.append(name + (f" ({', '.join(params)})" if params else ""))
        lines.append(f"| {kind} | {', '.join(names)} |")
    return "\n".join(lines)


def spec(kind: str, name: str) -> OperatorSpec:
    """The registered spec of an operator (aliases resolve to their target)."""
    _check_kind(kind)
    if name in _ALIASES[kind]:
        name = _ALIASES[kind][name][0]
    if name not in _REGISTRY[kind]:
        raise ValueError(f"unknown {kind} {name!r}; valid choices: {choices(kind)}")
    return _REGISTRY[kind][name]


def build(kind: str, name: str, **params: Any) -> Callable:
    """Return operator `name` of `kind` with `params` bound, after validating every parameter.

    Elementwise operators broadcast; aggregators take `dim` (default -1) at call time.
    """
    _check_kind(kind)
    fixed: dict[str, Any] = {}
    if not isinstance(name, str):  # a list or a mapping: no operator's name
        raise ValueError(f"unknown {kind} {name!r}; valid choices: {choices(kind)}")
    if name in _ALIASES[kind]:
        target, fixed = _ALIASES[kind][name]
        clash = sorted(set(params) & set(fixed))
        if clash:
            raise ValueError(f"{kind} '{name}' fixes {clash}; do not pass them")
        name_for_errors, name = name, target
    else:
        name_for_errors = name
    s = spec(kind, name)
    values = checked(kind, name_for_errors, params, s.params, fixed)
    if s.factory:
        return s.fn(**values)
    if not values:
        return s.fn
    return functools.partial(s.fn, **values)


def param_table() -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """Each kind -> each name (aliases too) -> the parameters a config may give it (an alias:
    but those it fixes) -> their ranges (`Param.fields`): the table `operator_params.json` holds
    for readers without torch (`python -m dfl_bench.operators` writes it)."""
    return {
        kind: {
            name: {
                key: param.fields()
                for key, param in spec(kind, name).params.items()
                if key not in _ALIASES[kind].get(name, ("", {}))[1]
            }
            for name in choices(kind)
        }
        for kind in KINDS
    }
