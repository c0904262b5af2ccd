"""The parametric families (dfl_bench/operators/families.py) at and toward their named limits
(Klement, Mesiar and Pap, Triangular Norms, ch. 4); their laws are in test_operators_laws.py and
their numerics in test_operators_numerics.py."""

from __future__ import annotations

from functools import partial

import pytest
import torch

from dfl_bench.operators import build
from dfl_bench.operators.families import FAMILIES, T_NORMS

grid = torch.arange(1, 32, dtype=torch.float64) / 32  # interior points: limits are pointwise
A, B = torch.meshgrid(grid, grid, indexing="ij")
EDGE = torch.tensor([0.0, 0.25, 1.0], dtype=torch.float64)


def T(name: str, p: float, a: torch.Tensor = A, b: torch.Tensor = B) -> torch.Tensor:
    return build("tnorm", name, p=p)(a, b)


def named(name: str) -> torch.Tensor:
    return build("tnorm", name)(A, B)


@pytest.mark.parametrize(
    ("family", "p", "equals"),
    [
        ("hamacher", 1.0, "product"),
        ("frank", 1.0, "product"),
        ("schweizer_sklar", 0.0, "product"),
        ("schweizer_sklar", 1.0, "lukasiewicz"),
        ("aczel_alsina", 1.0, "product"),
    ],
)
def test_a_family_at_its_named_parameter_is_that_t_norm(family: str, p: float, equals: str):
    torch.testing.assert_close(T(family, p), named(equals), atol=1e-12, rtol=0)
    e = torch.meshgrid(EDGE, EDGE, indexing="ij")
    torch.testing.assert_close(T(family, p, *e), build("tnorm", equals)(*e), atol=1e-12, rtol=0)


def test_hamacher_at_zero_is_the_hamacher_product():
    torch.testing.assert_close(T("hamacher", 0.0), A * B / (A + B - A * B))
    assert T("hamacher", 0.0, torch.zeros(1), torch.zeros(1)).item() == 0.0


def test_schweizer_sklar_at_minus_one_is_the_hamacher_product():
    torch.testing.assert_close(T("schweizer_sklar", -1.0), T("hamacher", 0.0))


@pytest.mark.parametrize(
    ("family", "steps", "limit"),
    [
        ("frank", (1e-2, 1e-4, 1e-6), "godel"),
        ("frank", (1e2, 1e4, 1e8), "lukasiewicz"),
        ("dombi", (5.0, 50.0, 500.0), "godel"),
        ("schweizer_sklar", (-5.0, -50.0, -500.0), "godel"),
        ("aczel_alsina", (5.0, 50.0, 500.0), "godel"),
        ("dombi", (0.5, 0.2, 0.05), "drastic"),
        ("schweizer_sklar", (5.0, 50.0, 500.0), "drastic"),
        ("aczel_alsina", (0.5, 0.2, 0.05), "drastic"),
    ],
)
def test_a_family_tends_to_its_limit_t_norm(family: str, steps: tuple, limit: str):
    """The largest distance to the limit shrinks along the parameter (within its declared
    range) and ends small."""
    distance = [float((T(family, p) - named(limit)).abs().max()) for p in steps]
    assert distance[0] >= distance[1] >= distance[2] and distance[0] > distance[2], distance
    assert distance[2] < 0.06, distance


@pytest.mark.parametrize(
    ("family", "p", "equals", "kw"),
    [
        ("hamacher", 1.0, "goguen", {}),
        ("frank", 1.0, "goguen", {}),
        ("schweizer_sklar", 0.0, "goguen", {}),
        ("schweizer_sklar", 1.0, "lukasiewicz", {}),
        ("aczel_alsina", 1.0, "goguen", {}),
    ],
)
def test_the_residuum_at_a_named_parameter_is_that_r_implication(family, p, equals, kw):
    got = build("implication", f"{family}_r", p=p)(A, B)
    torch.testing.assert_close(got, build("implication", equals, **kw)(A, B), atol=1e-12, rtol=0)


@pytest.mark.parametrize("family", ["hamacher", "frank", "schweizer_sklar", "aczel_alsina"])
def test_the_s_implication_of_the_product_member_is_reichenbach(family: str):
    p = 0.0 if family == "schweizer_sklar" else 1.0
    got = build("implication", f"{family}_s", p=p)(A, B)
    torch.testing.assert_close(got, build("implication", "reichenbach")(A, B))


@pytest.mark.parametrize("family", FAMILIES)
def test_the_parameter_is_p_from_the_command_line_and_a_bad_one_names_the_range(family: str):
    from dfl_bench.lifecycle import sweep, train

    cfg = sweep.job_config([f"tnorm={family}", "tnorm.p=3", "profile=smoke"])
    assert train.resolved_config(cfg)["tnorm"] == {"name": family, "p": 3.0}
    if family != "schweizer_sklar":  # any real p is valid there
        with pytest.raises(ValueError, match=rf"tnorm '{family}': p=-3.0 is out of range"):
            build("tnorm", family, p=-3.0)


CORNERS = torch.tensor([0.0, 1e-38, 1e-7, 0.5, 1 - 1e-7, 1.0])  # float32, subnormal included


def _finite_everywhere(name: str, p: float) -> bool:
    """Values and gradients of all six operators of the family finite on a grid with corners."""
    grid = torch.cat([CORNERS, torch.rand(30, generator=torch.Generator().manual_seed(0))])
    a0, b0 = torch.meshgrid(grid, grid, indexing="ij")
    for kind, op in (("tnorm", name), ("tconorm", name), ("implication", f"{name}_s"),
                     ("implication", f"{name}_r")):  # fmt: skip
        a, b = a0.clone().requires_grad_(True), b0.clone().requires_grad_(True)
        value = build(kind, op, p=p)(a, b)
        value.sum().backward()
        if not all(torch.isfinite(t).all() for t in (value, a.grad, b.grad)):
            return False
    for kind in ("forall", "exists"):
        x = torch.rand(6, 10, generator=torch.Generator().manual_seed(1))
        x[0, 0], x[1, 1], x[2] = 0.0, 1.0, 1e-38
        x.requires_grad_(True)
        value = build(kind, name, p=p)(x, dim=1)
        value.sum().backward()
        if not (torch.isfinite(value).all() and torch.isfinite(x.grad).all()):
            return False
    return True


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_is_finite_at_the_ends_of_its_declared_range_and_refuses_beyond(family):
    from dfl_bench.operators import spec

    param = spec("tnorm", family).params["p"]
    ends = [x for x in (param.low, param.high, *param.also) if x is not None]
    assert all(_finite_everywhere(family, p) for p in ends), ends
    for beyond in (param.low / 10 if param.low > 0 else param.low * 10, param.high * 10):
        with pytest.raises(ValueError, match="out of range"):
            build("tnorm", family, p=beyond)


def _parameters(family: str) -> list[float]:
    """The family's parameters of conf/families/parametric.yaml, its range's ends and a few."""
    from campaign.bench.family_timing import family_sets
    from dfl_bench.operators import spec

    param = spec("tnorm", family).params["p"]
    rows = [s["tnorm"]["p"] for s in family_sets().values() if s["tnorm"]["name"] == family]
    few = [p for p in (-2.0, -0.5, 0.5, 1.0, 2.0, 10.0) if param.low <= p <= param.high]
    return sorted({*rows, *few, param.low, param.high, *param.also})


def _reference(kind: str, family: str, a: torch.Tensor, b: torch.Tensor, p: float):
    """The operator as it was: autograd of the formula at the floored inputs
    (`_gradient_at_floor`)."""
    from dfl_bench.operators.families import _gradient_at_floor

    t = T_NORMS[family][0]
    if kind == "tnorm":
        return _gradient_at_floor(t, a, b, p)
    if kind == "tconorm":
        return 1.0 - _gradient_at_floor(t, 1.0 - a, 1.0 - b, p)
    return 1.0 - _gradient_at_floor(t, a, 1.0 - b, p)


def _exact_partials(kind: str, family: str, a: torch.Tensor, b: torch.Tensor, p: float):
    """The operator's partials in float64: T's formula by autograd at the float32 arguments the
    operator gives it (1 - a for S), each floored at EPS by a clamp (a tie stays a tie)."""
    from dfl_bench.operators.numerics import EPS

    x, y = {"tnorm": (a, b), "tconorm": (1.0 - a, 1.0 - b), "implication": (a, 1.0 - b)}[kind]
    x, y = (v.clamp_min(EPS).double().requires_grad_() for v in (x, y))
    T_NORMS[family][0](x, y, p).sum().backward()
    return (-x.grad if kind == "implication" else x.grad), y.grad


def _gradients(op, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """d sum(op(a, b)) / da and / db."""
    a, b = a.clone().requires_grad_(), b.clone().requires_grad_()
    op(a, b).sum().backward()
    return a.grad, b.grad


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", ["tnorm", "tconorm", "implication"])
def test_closed_form_derivatives_are_autograds_of_the_formula_or_closer_to_exact(kind, family):
    """T, S and the S-implication (`_TNorm`), on a grid with corners and subnormals at each
    parameter of the family's rows, its range's ends and a few: the formula's values bit for
    bit (the straight-through sum before rounded them by an ulp); each derivative equal to what
    autograd of the formula at the floored inputs gave, to float rounding (1e-5 relative), or
    closer to the float64 derivative (`_exact_partials`) than that was (cancellation at extreme
    parameters; exact ties at the floor). Broadcast inputs get the summed gradients."""
    grid = torch.cat(
        [
            CORNERS,
            torch.tensor([1e-45, 3e-8, 0.999]),
            torch.rand(30, generator=torch.Generator().manual_seed(2)),
        ]
    )
    name = f"{family}_s" if kind == "implication" else family
    a, b = torch.broadcast_tensors(grid[:, None], grid[None, :])
    for p in _parameters(family):
        op = build(kind, name, p=p)
        value, t = op(a, b), T_NORMS[family][0]
        formula = {"tnorm": t(a, b, p), "tconorm": 1 - t(1 - a, 1 - b, p)}.get(kind)
        assert torch.equal(value, 1 - t(a, 1 - b, p) if formula is None else formula), p
        before = _reference(kind, family, a, b, p)  # exact + (at_floor - at_floor): rounding
        torch.testing.assert_close(value, before, rtol=1e-6, atol=1e-12, msg=f"p={p}")
        new = _gradients(op, a, b)
        old = _gradients(partial(_reference, kind, family, p=p), a, b)
        exact = _exact_partials(kind, family, a, b, p)
        for got, was, true in zip(new, old, exact, strict=True):
            error, before = (got.double() - true).abs(), (was.double() - true).abs()
            assert (error <= before + 1e-5 * true.abs() + 1e-6).all(), p
        summed = _gradients(op, grid[:, None], grid[None, :])
        torch.testing.assert_close(summed[0], new[0].sum(1, keepdim=True), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(summed[1], new[1].sum(0, keepdim=True), rtol=1e-5, atol=1e-5)


def test_the_mask_products_equal_torch_where_to_the_bit():
    """`_select` and `_zero_if_any_zero` stand in for boolean `where`s (cheaper on the CPU):
    equal to the bit for finite values >= 0, zeros and subnormals included."""
    from dfl_bench.operators.families import _select, _zero_if_any_zero

    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(500, generator=g), torch.rand(500, generator=g)
    x[:50], y[50:100], x[100:110] = 0.0, 0.0, 1e-45
    cond = torch.rand(500, generator=g) < 0.5
    assert torch.equal(_select(cond, x, y), torch.where(cond, x, y))
    a, b = torch.rand(500, generator=g), torch.rand(500, generator=g)
    a[:40], b[20:60], a[60:70] = 0.0, 0.0, 1e-45
    expected = torch.where((a == 0) | (b == 0), 0.0, x)
    got = _zero_if_any_zero(x, a, b)
    assert torch.equal(got, expected) and not torch.signbit(got).any()
