"""Theory reproduction (dfl_bench.theory): MC fractions, closed forms, gradient ascent, CLI."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dfl_bench.operators import build
from dfl_bench.theory import closed_forms, surfaces
from dfl_bench.theory.__main__ import main
from dfl_bench.theory.gradient_ascent import (
    Protocol,
    ascend,
    formula,
    parameters,
    success_fraction,
)
from dfl_bench.theory.nonvanishing import FractionCase, count_nonvanishing, estimate

SAMPLES = 40_000


def within(row: dict, reference: float, k: float = 4.0) -> bool:
    """|measured - reference| within k binomial standard errors under the reference."""
    sd = math.sqrt(reference * (1 - reference) / row["samples"])
    return abs(row["measured"] - reference) <= k * sd


@pytest.mark.parametrize("kind, name", [("forall", "lukasiewicz"), ("exists", "bounded_sum")])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_lukasiewicz_fraction_is_one_over_n_factorial(kind: str, name: str, n: int) -> None:
    row = estimate(FractionCase(kind, name, n), SAMPLES, seed=1)
    assert within(row, 1 / math.factorial(n))
    assert row["paper"] == pytest.approx(1 / math.factorial(n))


@pytest.mark.parametrize(
    "kind, name", [("forall", "nilpotent_minimum"), ("exists", "nilpotent_maximum")]
)
@pytest.mark.parametrize("n", [2, 3, 5])
def test_nilpotent_fraction_is_one_over_two_to_n_minus_one(kind: str, name: str, n: int) -> None:
    row = estimate(FractionCase(kind, name, n), SAMPLES, seed=2)
    assert within(row, 1 / 2 ** (n - 1))


def test_nilpotent_aggregator_is_single_passing() -> None:
    op = build("forall", "nilpotent_minimum")
    some, every = count_nonvanishing(op, "forall", 4, 5000, torch.Generator().manual_seed(0))
    assert some > 0 and every == 0


@pytest.mark.parametrize("n", [2, 3, 4])
def test_yager_p2_fraction_matches_the_ball_volume_not_the_printed_formula(n: int) -> None:
    row = estimate(FractionCase("forall", "yager", n, {"p": 2.0}), SAMPLES, seed=3)
    ball = math.pi ** (n / 2) / math.gamma(n / 2 + 1) / 2**n
    assert row["exact"] == pytest.approx(ball)
    assert within(row, ball)
    assert not within(row, row["paper"], k=10.0)


@pytest.mark.parametrize("kind, name", [("tnorm", "yager"), ("implication", "yager_s")])
def test_yager_binary_fraction_matches_paper(kind: str, name: str) -> None:
    row = estimate(FractionCase(kind, name, 2, {"p": 3.0}), SAMPLES, seed=4)
    assert within(row, closed_forms.yager_tnorm_paper(3.0))


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=0.2, max_value=20.0))
def test_paper_yager_tnorm_form_equals_orthant_volume(p: float) -> None:
    assert closed_forms.yager_tnorm_paper(p) == pytest.approx(closed_forms.yager_exact(2, p))


@given(st.integers(min_value=1, max_value=12))
def test_yager_volume_at_p1_is_lukasiewicz(n: int) -> None:
    assert closed_forms.yager_exact(n, 1.0) == pytest.approx(closed_forms.lukasiewicz_paper(n))


def test_binary_operator_needs_two_inputs() -> None:
    with pytest.raises(ValueError, match="n=2"):
        estimate(FractionCase("tnorm", "yager", 3, {"p": 2.0}), 10, seed=0)


def test_ascent_solves_a_product_conjunction() -> None:
    theta0 = torch.rand(50, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    final = ascend(lambda x: x.prod(dim=-1), 0.05 + 0.9 * theta0, Protocol(lr=0.1, steps=500))
    assert torch.all(final.prod(dim=-1) >= 1 - 1e-3)


def run_one(norm: str, name: str, start: list[float], protocol: Protocol) -> int:
    T, S = build("tnorm", norm), build("tconorm", norm)
    theta0 = parameters(torch.tensor([start], dtype=torch.float64), protocol)
    return success_fraction(T, S, name, protocol, theta0)[0]


@pytest.mark.parametrize("parametrization", ["clip", "sigmoid"])
def test_lukasiewicz_running_example_stalls_where_its_derivative_vanishes(
    parametrization: str,
) -> None:
    lr = 0.1 if parametrization == "clip" else 1.0
    protocol = Protocol(lr=lr, steps=400, parametrization=parametrization, tol=0.01)
    assert run_one("lukasiewicz", "(a&b)|(c&~a)", [0.3, 0.2, 0.1], protocol) == 0
    assert run_one("lukasiewicz", "(a&b)|(c&~a)", [0.6, 0.6, 0.1], protocol) == 1


def test_goedel_gets_stuck_on_the_papers_example() -> None:
    protocol = Protocol(lr=0.05, steps=200)
    assert run_one("godel", "(a|b)&(~a|c)", [0.4, 0.2, 0.1], protocol) == 0
    assert run_one("godel", "(a|b)&(~a|c)", [0.4, 0.2, 0.7], protocol) == 1


def test_protocol_and_formula_validate_their_names() -> None:
    with pytest.raises(ValueError, match="clip"):
        Protocol(parametrization="tanh")
    with pytest.raises(ValueError, match="valid choices"):
        formula("a|~a")


def test_reichenbach_derivatives_match_section_8() -> None:
    a, c = surfaces.grid(9)
    rc = build("implication", "reichenbach")
    assert torch.allclose(surfaces.dmp(rc)(a, c), a)
    assert torch.allclose(surfaces.dmt(rc)(a, c), 1 - c)
    log_rc = surfaces.under_forall(rc, "log_product")
    assert torch.allclose(surfaces.dmt(log_rc)(a, c), (1 - c) / rc(a, c))


@pytest.mark.slow
def test_cli_quick_writes_the_expected_files(tmp_path) -> None:
    assert main(["--quick", "--out", str(tmp_path), "--samples", "2000", "--inits", "20"]) == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert {"fractions.csv", "gradient_ascent.csv", "README.md", "ratio_2_yager.png"} <= names
    assert sum(name.startswith("surfaces_") and name.endswith(".png") for name in names) == 5
    fractions = pd.read_csv(tmp_path / "fractions.csv")
    assert {"operator", "p", "n", "samples", "measured", "stderr", "paper"} <= set(fractions)
    assert (fractions["samples"] == 2000).all()
    ascent = pd.read_csv(tmp_path / "gradient_ascent.csv")
    assert (ascent["inits"] == 20).all() and ascent["measured"].between(0, 1).all()
    assert "--quick" in (tmp_path / "README.md").read_text()


def test_every_family_has_its_grid_of_parameters_for_the_theory():
    """`make theory` measures each family over its own p grid (family_theory.PARAMETERS, chosen
    on both sides of its named members and limits): a family added to operators/families.py
    without one is named here, not by a KeyError of `make theory`."""
    from dfl_bench.operators.families import FAMILIES
    from dfl_bench.theory import family_theory

    assert sorted(family_theory.PARAMETERS) == sorted(FAMILIES)


def test_family_measures_meet_their_closed_forms():
    """The product members' S-implication is Reichenbach: in the corner U(0, 1/2)^2 its
    consequent share is E[a] / (E[a] + E[1 - c]) = 1/4; Lukasiewicz (Schweizer-Sklar p = 1)
    splits evenly; an S-implication's uniform share is 1/2 by contraposition."""
    from dfl_bench.theory import family_theory

    for family, p in (("hamacher", 1.0), ("frank", 1.0), ("aczel_alsina", 1.0)):
        share = family_theory.consequent_share(f"{family}_s", p, 0.5, 20_000, seed=0)
        assert share == pytest.approx(0.25, abs=0.01)
    assert family_theory.consequent_share(
        "schweizer_sklar_s", 1.0, 0.5, 20_000, 0
    ) == pytest.approx(0.5)
    assert family_theory.consequent_share("dombi_s", 2.0, 1.0, 20_000, 0) == pytest.approx(
        0.5, abs=0.02
    )
    assert family_theory.fraction("forall", "schweizer_sklar", 1.0, 4, 20_000, 0) == pytest.approx(
        1 / 24, abs=0.005
    )  # Lukasiewicz: 1/n! (Prop. luk)
