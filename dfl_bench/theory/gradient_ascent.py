"""Gradient ascent on the truth value of small propositional formulas (Section 7, examples).

Protocol (documented in results/theory/README.md): a, b, c ~ U(0, 1) independently; either
projected ascent on the truth values (step, then clip to [0, 1]) or ascent on logits with
a = sigmoid(theta); a fixed number of full-gradient steps; a run reaches a global optimum when the
final truth value is >= 1 - tol (the formulas' maximum is 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import torch
from torch import Tensor

from dfl_bench.operators import build

Formula = Callable[[Callable, Callable, Tensor, Tensor, Tensor], Tensor]
PARAMETRIZATIONS = ("clip", "sigmoid")


def disjunction_of_conjunctions(
    T: Callable, S: Callable, a: Tensor, b: Tensor, c: Tensor
) -> Tensor:
    """Running example (a and b) or (c and not a): f = S(T(a, b), T(1 - a, c)) (Eq. exmp_tsnorm)."""
    return S(T(a, b), T(1 - a, c))


def conjunction_of_disjunctions(
    T: Callable, S: Callable, a: Tensor, b: Tensor, c: Tensor
) -> Tensor:
    """Goedel paragraph of Section 7.1: phi = (a or b) and (not a or c), T(S(a, b), S(1-a, c))."""
    return T(S(a, b), S(1 - a, c))


FORMULAS: dict[str, Formula] = {
    "(a&b)|(c&~a)": disjunction_of_conjunctions,
    "(a|b)&(~a|c)": conjunction_of_disjunctions,
}


@dataclass(frozen=True)
class Protocol:
    """How one gradient-ascent experiment is run (see the module docstring)."""

    lr: float = 0.01
    steps: int = 2000
    parametrization: str = "clip"
    tol: float = 1e-3

    def __post_init__(self) -> None:
        if self.parametrization not in PARAMETRIZATIONS:
            raise ValueError(
                f"parametrization {self.parametrization!r} is not valid; "
                f"valid choices: {list(PARAMETRIZATIONS)}"
            )


def formula(name: str) -> Formula:
    """The formula registered under `name`."""
    if name not in FORMULAS:
        raise ValueError(f"unknown formula {name!r}; valid choices: {list(FORMULAS)}")
    return FORMULAS[name]


def truth(theta: Tensor, protocol: Protocol) -> Tensor:
    """Truth values of the parameters: themselves (clip) or sigmoid(theta)."""
    return torch.sigmoid(theta) if protocol.parametrization == "sigmoid" else theta


def parameters(x: Tensor, protocol: Protocol) -> Tensor:
    """The parameters whose truth values are x: x itself (clip) or logit(x) (sigmoid)."""
    return torch.logit(x) if protocol.parametrization == "sigmoid" else x


def initial_parameters(inits: int, protocol: Protocol, generator: torch.Generator) -> Tensor:
    """Parameters whose truth values are U(0, 1)^3."""
    return parameters(torch.rand(inits, 3, generator=generator, dtype=torch.float64), protocol)


def ascend(f: Callable[[Tensor], Tensor], theta: Tensor, protocol: Protocol) -> Tensor:
    """Run `protocol.steps` gradient-ascent steps on every row of theta independently."""
    theta = theta.clone()
    for _ in range(protocol.steps):
        theta.requires_grad_(True)
        (grad,) = torch.autograd.grad(f(truth(theta, protocol)).sum(), theta)
        theta = theta.detach() + protocol.lr * grad
        if protocol.parametrization == "clip":
            theta = theta.clamp(0.0, 1.0)
    return theta.detach()


def success_fraction(
    tnorm: Callable, tconorm: Callable, name: str, protocol: Protocol, theta0: Tensor
) -> tuple[int, Tensor]:
    """(#runs whose final truth value is >= 1 - tol, final truth values) from inits theta0."""
    phi = formula(name)

    def f(x: Tensor) -> Tensor:
        return phi(tnorm, tconorm, x[:, 0], x[:, 1], x[:, 2])

    final = f(truth(ascend(f, theta0, protocol), protocol))
    return int((final >= 1 - protocol.tol).sum()), final


def run_experiment(
    logic: tuple[str, dict[str, Any]],
    name: str,
    protocol: Protocol,
    inits: int,
    seed: int,
    paper: float | None = None,
) -> dict[str, Any]:
    """One CSV row: the fraction of initializations reaching a global optimum, binomial stderr."""
    norm, params = logic
    T, S = build("tnorm", norm, **params), build("tconorm", norm, **params)
    generator = torch.Generator().manual_seed(seed)
    successes, final = success_fraction(
        T, S, name, protocol, initial_parameters(inits, protocol, generator)
    )
    measured = successes / inits
    return {
        "formula": name,
        "tnorm": norm,
        "p": params.get("p"),
        "parametrization": protocol.parametrization,
        "lr": protocol.lr,
        "steps": protocol.steps,
        "tol": protocol.tol,
        "inits": inits,
        "successes": successes,
        "measured": measured,
        "stderr": math.sqrt(measured * (1 - measured) / inits),
        "paper": paper,
        "mean_final_truth": float(final.mean()),
    }


PAPER: dict[tuple[str, str], float] = {
    ("godel", "(a&b)|(c&~a)"): 1.0,
    ("godel", "(a|b)&(~a|c)"): 0.888,
    ("lukasiewicz", "(a&b)|(c&~a)"): 0.835,
}
"""Section 7.1 ('always finds a global optimum', then 88.8% for phi) and Section 7.2 (83.5%)."""

LOGICS: list[tuple[str, dict[str, Any]]] = [
    ("godel", {}),
    ("lukasiewicz", {}),
    ("product", {}),
    ("yager", {"p": 2.0}),
]
MAIN_PROTOCOL = Protocol(lr=0.01, steps=2000, parametrization="clip")
QUICK_PROTOCOL = Protocol(lr=0.1, steps=200, parametrization="clip")
VARIANT_PROTOCOLS = [QUICK_PROTOCOL, Protocol(lr=1.0, steps=3000, parametrization="sigmoid")]


def ascent_table(protocols: list[Protocol], inits: int, seed: int) -> pd.DataFrame:
    """Every logic x formula x protocol; all share the same initial truth values (paired)."""
    return pd.DataFrame(
        [
            run_experiment(logic, name, protocol, inits, seed, PAPER.get((logic[0], name)))
            for protocol in protocols
            for name in FORMULAS
            for logic in LOGICS
        ]
    )
