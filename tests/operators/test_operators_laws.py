"""Algebraic laws of the operators (Section 3, appendix A, appendix D "Sigmoidal Functions").

Inputs are dyadic rationals k/1024 in float64, so sums, products and 1 - x are exact and the
discontinuous operators (drastic, nilpotent) are tested at their boundaries without rounding.
"""

from __future__ import annotations

import functools

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dfl_bench.operators import KINDS, build, choices, examples, spec
from dfl_bench.operators.families import FAMILIES

TOL = 1e-9
unit = st.integers(0, 1024).map(lambda k: k / 1024)


def triples(ks: list[int]) -> list[tuple[float, float, float]]:
    """Rows (a, c, x) of k/1024 from one flat list of k (cheaper to draw than tuples)."""
    return [(ks[i] / 1024, ks[i + 1] / 1024, ks[i + 2] / 1024) for i in range(0, len(ks) - 2, 3)]


batch = st.lists(st.integers(0, 1024), min_size=3, max_size=72).map(triples)
fast = settings(max_examples=20, deadline=None)

# Every registered operator at the parameters the registry gives for its laws (`examples`: each
# side of a parameter's named limits), with what it is defined from (OperatorSpec): a new
# operator is checked by every law below without editing this file.


def cases(kind: str, relation: str | None = None) -> list[tuple]:
    """(name, params) of every operator of `kind`, or (name, related, params) of those with the
    `relation` (dual, s_of, r_of, folds), at each of their law-test parameter settings."""
    out: list[tuple] = []
    for name in choices(kind):
        related = getattr(spec(kind, name), relation) if relation else None
        if relation and (related is None or name in ALIASES[kind]):
            continue
        for kw in examples(kind, name):
            out.append((name, kw) if relation is None else (name, related, kw))
    return out


ALIASES = {kind: {n for n in choices(kind) if spec(kind, n).name != n} for kind in KINDS}
TNORMS = cases("tnorm")
TCONORMS = cases("tconorm", "dual")  # (t-conorm, the t-norm it is the N-dual of, params)
# S-implication I(a, c) = S(1 - a, c): implication -> t-conorm (Table "simplications").
S_IMPLICATIONS = cases("implication", "s_of")
# R-implication I(a, c) = sup{b : T(a, b) <= c}: implication -> t-norm (Table "rimplications").
R_IMPLICATIONS = cases("implication", "r_of")
# S-implications (standard negation) are contrapositive, residua satisfy the identity principle
# (Section 4); Dubois-Prade, an S-implication only, satisfies it too (Table "simplications").
CONTRAPOSITIVE = {name for name, _, _ in S_IMPLICATIONS}
IDENTITY_PRINCIPLE = {name for name, _, _ in R_IMPLICATIONS} | {"dubois_prade"}
SIGMOIDAL = [
    {"base": base, "s": s, "b0": b0}
    for base in ("reichenbach", "kleene_dienes", "lukasiewicz", "goguen", "godel", "fodor")
    for s, b0 in ((9.0, -0.5), (0.01, -0.5), (20.0, -0.2))
] + [{"base": "yager_r", "s": 9.0, "b0": -0.5, "p": 2.0}, {"base": "yager_s", "s": 50.0, "p": 2.0}]
IMPLICATIONS = [(n, kw) for n, _, kw in S_IMPLICATIONS + R_IMPLICATIONS] + [
    ("sigmoidal", kw) for kw in SIGMOIDAL
]
FORALL_FROM_TNORM = cases("forall", "folds")
EXISTS_FROM_TCONORM = cases("exists", "folds")
# the aggregators that fold no t-norm or t-conorm: the generalized means (log_product: its own
# test below)
OTHER_AGGREGATORS = [
    (kind, name, kw)
    for kind in ("forall", "exists")
    for name, kw in cases(kind)
    if spec(kind, name).folds is None and name != "log_product"
]


def close(x: torch.Tensor, y: torch.Tensor, tol: float = TOL) -> None:
    """Assert |x - y| <= tol elementwise (a light torch.testing.assert_close)."""
    assert x.shape == y.shape and torch.allclose(x, y, atol=tol, rtol=0), (x, y)


def cols(rows: list[tuple[float, ...]]) -> tuple[torch.Tensor, ...]:
    """Columns of drawn rows as float64 tensors."""
    return tuple(torch.tensor(col, dtype=torch.float64) for col in zip(*rows, strict=True))


def ids(cases: list) -> list[str]:
    return [f"{c[0]}-{c[-1]}" for c in cases]


@pytest.mark.parametrize(("name", "kw"), TNORMS, ids=ids(TNORMS))
@fast
@given(rows=batch)
def test_tnorm_laws(name: str, kw: dict, rows: list) -> None:
    """Definition "tnorm": commutative, associative, monotone, T(a, 1) = a, values in [0, 1]."""
    T = build("tnorm", name, **kw)
    a, b, c = cols(rows)
    assert torch.equal(T(a, b), T(b, a))
    close(T(a, T(b, c)), T(T(a, b), c))
    lo, hi = torch.minimum(b, c), torch.maximum(b, c)
    assert (T(a, lo) <= T(a, hi) + TOL).all()
    close(T(a, torch.ones_like(a)), a)
    assert ((T(a, b) >= 0) & (T(a, b) <= 1)).all()


@pytest.mark.parametrize(("name", "tnorm", "kw"), TCONORMS, ids=ids(TCONORMS))
@fast
@given(rows=batch)
@example(rows=[(0.5, 0.5, 0.25), (0.25, 0.75, 1.0), (0.0, 1.0, 0.5)])
def test_tconorm_is_n_dual(name: str, tnorm: str, kw: dict, rows: list) -> None:
    """Eq. "tconorm": S(a, b) = 1 - T(1 - a, 1 - b) (so also S(a, 0) = a)."""
    T = build("tnorm", tnorm, **kw)
    S = build("tconorm", name, **kw)
    a, b, _ = cols(rows)
    close(S(a, b), 1 - T(1 - a, 1 - b))
    close(S(a, torch.zeros_like(a)), a)


@pytest.mark.parametrize(("name", "kw"), IMPLICATIONS, ids=ids(IMPLICATIONS))
@fast
@given(rows=batch)
def test_implication_definition(name: str, kw: dict, rows: list) -> None:
    """Definition "implication": I(0,0) = I(1,1) = 1, I(1,0) = 0, I(., c) falls, I(a, .) rises."""
    I = build("implication", name, **kw)
    corners = I(torch.tensor([0.0, 1.0, 1.0, 0.0]), torch.tensor([0.0, 1.0, 0.0, 1.0]))
    close(corners, torch.tensor([1.0, 1.0, 0.0, 1.0]), 1e-6)
    a, c, x = cols(rows)
    lo, hi = torch.minimum(a, x), torch.maximum(a, x)
    assert (I(hi, c) <= I(lo, c) + TOL).all()
    assert (I(a, torch.minimum(c, x)) <= I(a, torch.maximum(c, x)) + TOL).all()
    assert ((I(a, c) >= -TOL) & (I(a, c) <= 1 + TOL)).all()


@pytest.mark.parametrize(("name", "conorm", "kw"), S_IMPLICATIONS, ids=ids(S_IMPLICATIONS))
@fast
@given(rows=batch)
def test_s_implications(name: str, conorm: str, kw: dict, rows: list) -> None:
    """Eq. "s-impl": I(a, c) = S(1 - a, c), and contrapositive symmetry I(a, c) = I(1-c, 1-a)."""
    I = build("implication", name, **kw)
    S = build("tconorm", conorm, **kw)
    a, c, _ = cols(rows)
    close(I(a, c), S(1 - a, c))
    close(I(a, c), I(1 - c, 1 - a))


@functools.cache
def r_implication_grid(tnorm: str, p: float | None) -> tuple[torch.Tensor, torch.Tensor]:
    """sup{b : T(a, b) <= c} on a b-grid of spacing 1/1024, for a, c on a 1/16 grid."""
    T = build("tnorm", tnorm, **({} if p is None else {"p": p}))
    grid = torch.arange(17, dtype=torch.float64) / 16
    b = torch.arange(1025, dtype=torch.float64) / 1024
    a, c = torch.meshgrid(grid, grid, indexing="ij")
    allowed = T(a[..., None], b) <= c[..., None] + 1e-12
    return torch.stack([a, c]), torch.where(allowed, b, -1.0).amax(-1)


@pytest.mark.parametrize(("name", "tnorm", "kw"), R_IMPLICATIONS, ids=ids(R_IMPLICATIONS))
def test_r_implications_are_residua(name: str, tnorm: str, kw: dict) -> None:
    """Eq. "r-implication": I_T(a, c) = sup{b in [0, 1] : T(a, b) <= c}, on a grid."""
    (a, c), sup = r_implication_grid(tnorm, kw.get("p"))
    I = build("implication", name, **kw)
    close(I(a, c), sup, 1 / 1024 + 1e-9)


@pytest.mark.parametrize("kw", SIGMOIDAL, ids=[str(kw) for kw in SIGMOIDAL])
@fast
@given(rows=batch)
def test_sigmoidal_keeps_properties(kw: dict, rows: list) -> None:
    """Appendix "Sigmoidal Functions": CP and IP carry over from the base; sigma_I = 1 iff I = 1."""
    sig = build("implication", "sigmoidal", **kw)
    base = build("implication", kw["base"], **({"p": kw["p"]} if "p" in kw else {}))
    a, c, _ = cols(rows)
    if kw["base"] in CONTRAPOSITIVE:
        close(sig(a, c), sig(1 - c, 1 - a))
    if kw["base"] in IDENTITY_PRINCIPLE:
        close(sig(a, a), torch.ones_like(a))
    # sigma_I is strictly increasing in I (Prop. "sigm_mono_increase_f"): 1 exactly where I = 1
    # and below 1 elsewhere, however close (with large s, 1 - sigma_I ~ s e^(-s/2) (1 - I)).
    i, v = base(a, c), sig(a, c)
    assert bool(((v - 1).abs()[i == 1] < 1e-12).all()) and bool((v[i < 1] < 1).all())
    assert bool((v.abs()[i == 0] < 1e-12).all()) and bool((v[i > 0] > 0).all())


def fold(op, x: torch.Tensor) -> torch.Tensor:
    """A_T(x_1, ..., x_n) = T(x_1, A_T(x_2, ..., x_n)) over the last dim (Section 3)."""
    out = x[..., -1]
    for i in range(x.shape[-1] - 2, -1, -1):
        out = op(x[..., i], out)
    return out


vectors = st.lists(st.lists(unit, min_size=1, max_size=7), min_size=1, max_size=8)


def padded(rows: list[list[float]], fill: float) -> torch.Tensor:
    """Rows padded to one length with the neutral element (1 for forall, 0 for exists)."""
    n = max(len(r) for r in rows)
    return torch.tensor([r + [fill] * (n - len(r)) for r in rows], dtype=torch.float64)


@pytest.mark.parametrize(("name", "tnorm", "kw"), FORALL_FROM_TNORM, ids=ids(FORALL_FROM_TNORM))
@fast
@given(rows=vectors)
@example(rows=[[0.5, 0.5, 1.0], [0.75, 0.25], [0.0], [1.0, 0.0, 0.5]])
def test_forall_equals_folded_tnorm(name: str, tnorm: str, kw: dict, rows: list) -> None:
    """Table "aggregation": A_T is the t-norm folded over the inputs."""
    x = padded(rows, 1.0)
    A = build("forall", name, **kw)
    close(A(x), fold(build("tnorm", tnorm, **kw), x))


@pytest.mark.parametrize(
    ("name", "tconorm", "kw"), EXISTS_FROM_TCONORM, ids=ids(EXISTS_FROM_TCONORM)
)
@fast
@given(rows=vectors)
@example(rows=[[0.5, 0.5, 0.0], [0.75, 0.25], [1.0], [1.0, 0.0, 0.5]])
def test_exists_equals_folded_tconorm(name: str, tconorm: str, kw: dict, rows: list) -> None:
    """Table "aggregation": E_S is the t-conorm folded over the inputs."""
    x = padded(rows, 0.0)
    E = build("exists", name, **kw)
    close(E(x), fold(build("tconorm", tconorm, **kw), x))


@fast
@given(rows=vectors)
def test_log_product_is_log_of_folded_product(rows: list) -> None:
    """Section 6: log A_TP = sum_i log x_i = log of the folded product (reduction="sum")."""
    x = padded(rows, 1.0).clamp_min(1 / 1024)
    A = build("forall", "log_product", reduction="sum")
    close(A(x), torch.log(fold(build("tnorm", "product"), x)))
    mean = build("forall", "log_product", reduction="mean")
    close(mean(x), A(x) / x.shape[-1])
    assert A(torch.ones(3)).item() == 0.0 and mean(torch.ones(3)).item() == 0.0


AGGREGATORS = (
    [("forall", n, kw) for n, _, kw in FORALL_FROM_TNORM]
    + [("exists", n, kw) for n, _, kw in EXISTS_FROM_TCONORM]
    + OTHER_AGGREGATORS
)


@pytest.mark.parametrize(("kind", "name", "kw"), AGGREGATORS, ids=ids(AGGREGATORS))
@pytest.mark.parametrize("n", [1, 2, 5, 64])
def test_aggregator_boundaries(kind: str, name: str, kw: dict, n: int) -> None:
    """Definition "aggr": A(0, ..., 0) = 0 and A(1, ..., 1) = 1."""
    A = build(kind, name, **kw)
    assert A(torch.zeros(n)).item() == pytest.approx(0.0, abs=1e-6)
    assert A(torch.ones(n)).item() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize(("kind", "name", "kw"), AGGREGATORS, ids=ids(AGGREGATORS))
@fast
@given(rows=st.lists(st.tuples(unit, unit), min_size=2, max_size=9))
def test_aggregator_symmetric_and_monotone(kind: str, name: str, kw: dict, rows: list) -> None:
    """Appendix A: aggregators are symmetric and non-decreasing in every argument."""
    A = build(kind, name, **kw)
    x, y = cols(rows)
    close(A(x.flip(0)), A(x))
    assert A(torch.minimum(x, y)) <= A(torch.maximum(x, y)) + TOL


@fast
@given(rows=vectors)
def test_generalized_means_special_cases(rows: list) -> None:
    """Eqs. "aggr_sos", "aggr_rmse", "p-mean": MAE, RMSE and the arithmetic mean."""
    x = padded(rows, 0.5)
    close(build("forall", "mae")(x), 1 - (1 - x).mean(-1))
    rmse = 1 - (1 - x).pow(2).mean(-1).sqrt()
    close(build("forall", "rmse")(x), rmse)
    close(build("exists", "generalized_mean", p=1.0)(x), x.mean(-1))
    quadratic = x.pow(2).mean(-1).sqrt()
    close(build("exists", "generalized_mean", p=2.0)(x), quadratic)


@pytest.mark.parametrize(("kind", "name", "kw"), AGGREGATORS, ids=ids(AGGREGATORS))
def test_aggregator_tuple_dims(kind: str, name: str, kw: dict) -> None:
    """forall x, y over a (b, b) matrix: dim=(0, 1) equals aggregating the flattened matrix."""
    A = build(kind, name, **kw)
    m = torch.rand(3, 4, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    close(A(m, dim=(0, 2)), A(m.permute(1, 0, 2).reshape(4, 15)))
    close(A(m, dim=(-1, 0)), A(m.permute(1, 0, 2).reshape(4, 15)))
    close(A(m, dim=1), A(m.transpose(1, 2)))


def test_every_registered_operator_is_checked_by_the_laws() -> None:
    """The lists above come from the registry: every operator is in the list of its kind, and
    every t-conorm, implication and aggregator says what it is defined from (or is one of the
    named exceptions: sigmoidal, the generalized means, log_product)."""
    checked = {
        "tnorm": {n for n, _ in TNORMS},
        "tconorm": {n for n, _, _ in TCONORMS},
        "implication": {n for n, _ in IMPLICATIONS},
        "forall": {n for k, n, _ in AGGREGATORS if k == "forall"} | {"log_product"},
        "exists": {n for k, n, _ in AGGREGATORS if k == "exists"},
    }
    assert {kind: sorted(set(choices(kind)) - names) for kind, names in checked.items()} == {
        kind: [] for kind in KINDS
    }
    assert {n for n, _ in IMPLICATIONS if n != "sigmoidal"} == {
        n for n, _, _ in S_IMPLICATIONS + R_IMPLICATIONS
    }
    assert {n for _, n, _ in OTHER_AGGREGATORS} == {
        "generalized_mean_error",
        "mae",
        "rmse",
        "generalized_mean",
    }
    # every t-norm has its dual t-conorm, every t-conorm its S-implication, and every t-norm its
    # residuum but one whose duals were derived (`duals=True`: the residuum is by hand)
    tnorms = {n for n, _ in TNORMS}
    assert {t for _, t, _ in TCONORMS} == tnorms
    assert {s for _, s, _ in S_IMPLICATIONS} == {n for n, _, _ in TCONORMS}
    derived = {t for n, t, _ in TCONORMS if spec("tconorm", n).derived}
    assert {t for _, t, _ in R_IMPLICATIONS} | derived == tnorms
    for family in FAMILIES:  # checked on each side of its named limits, not at one p
        assert len(examples("tnorm", family)) >= 2, family


TOY = """
import torch
from dfl_bench.operators import Param, register


@register("tnorm", "toy_hamacher", duals=True, p=Param(2.0, low=0.0, examples=(0.5, 2.0, 8.0)))
def toy_hamacher(a, b, p=2.0):
    \"\"\"The Hamacher t-norm ab / (p + (1 - p)(a + b - ab)), p > 0 (p = 2: Einstein).\"\"\"
    return a * b / (p + (1 - p) * (a + b - a * b))
"""


@pytest.mark.slow
def test_a_tnorm_in_a_module_of_its_own_is_checked_by_every_law(tmp_path):
    """docs/operators.md's extension path: a t-norm registered with its duals derived in a
    user's module (loaded before collection) is checked by this file's laws without an edit."""
    import os
    import subprocess
    import sys

    (tmp_path / "toy_tnorm.py").write_text(TOY)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "toy_tnorm", "-p", "no:cacheprovider",
         "-k", "toy_hamacher or every_registered", __file__],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]
    passed = int(run.stdout.strip().splitlines()[-1].split(" passed")[0].split()[-1])
    # the t-norm's laws, its dual's, its S-implication's (each at 3 parameters) and the
    # registry's completeness check
    assert passed == 3 + 3 + 3 + 3 + 1, run.stdout[-3000:]
