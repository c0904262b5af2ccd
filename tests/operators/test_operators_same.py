"""Operators that at one value of their parameter are another registered operator bit for bit
(operator_params.SAME): each pair equal in value and gradient on [0, 1] (corners and float32
subnormals included), in float32 and float64, and refused naming the one spelling."""

from __future__ import annotations

import pytest
import torch

from dfl_bench.operator_params import SAME, refusal, same_operator
from dfl_bench.operators import build

CORNERS = [0.0, 1e-45, 1e-38, 1e-12, 5e-8, 1e-7, 2e-7, 1e-4, 0.3, 0.5, 0.99999994, 1.0]


def values(dtype: torch.dtype) -> torch.Tensor:
    """The corners and 200 random truth values."""
    g = torch.Generator().manual_seed(0)
    corners = torch.tensor(CORNERS, dtype=dtype)
    return torch.cat([corners, torch.rand(200, generator=g, dtype=dtype)])


def outputs(kind: str, entry: dict, dtype: torch.dtype) -> list[torch.Tensor]:
    """Operator `entry`'s values and gradients: on every pair of `values` (binary), else on
    rows of 7 near 0 and near 1 (aggregators), with corners among them."""
    name, params = entry["name"], {k: v for k, v in entry.items() if k != "name"}
    op = build(kind, name, **params)
    v = values(dtype)
    if kind in ("forall", "exists"):
        rows = torch.cat([v[torch.randperm(len(v), generator=torch.Generator().manual_seed(i))]
                          [:7] for i in range(300)]).reshape(-1, 7)  # fmt: skip
        args = [torch.cat([rows, 1 - rows * 0.01, rows * 0.01])]
    else:
        a, b = torch.meshgrid(v, v, indexing="ij")
        args = [a.reshape(-1), b.reshape(-1)]
    args = [x.clone().requires_grad_() for x in args]
    out = op(*args, dim=-1) if kind in ("forall", "exists") else op(*args)
    return [out.detach(), *torch.autograd.grad(out.sum(), args)]


def entries(kind: str, spelled: tuple[str, float | None]) -> dict:
    name, p = spelled
    return {"name": name} if p is None else {"name": name, "p": p}


SAME_PAIRS = [(kind, key, canon) for kind, table in SAME.items() for key, canon in table.items()]


@pytest.mark.parametrize(("kind", "key", "canon"), SAME_PAIRS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_each_same_operator_is_its_spelling_bit_for_bit(kind, key, canon, dtype):
    for mine, theirs in zip(
        outputs(kind, entries(kind, key), dtype),
        outputs(kind, entries(kind, canon), dtype),
        strict=True,
    ):
        assert torch.equal(mine, theirs)


@pytest.mark.parametrize(("kind", "key", "canon"), SAME_PAIRS)
def test_each_same_operator_is_refused_naming_its_spelling(kind, key, canon):
    name, p = key
    spelling = f"{kind}={canon[0]}" + ("" if canon[1] is None else f" {kind}.p={canon[1]:g}")
    said = f"{kind}={name} {kind}.p={p:g} is {spelling}; write that"
    assert refusal(kind, {"name": name, "p": p}) == said
    assert same_operator(kind, {"name": name, "p": str(p)}) == said  # a number given as text
    assert refusal(kind, entries(kind, canon)) is None


def test_a_sigmoidal_implications_base_is_refused_naming_its_spelling():
    entry = {"name": "sigmoidal", "base": "hamacher_r", "s": 9.0, "b0": -0.5, "p": 1}
    assert refusal("implication", entry) == (
        "implication.base=hamacher_r implication.p=1 is implication.base=frank_r "
        "implication.p=1; write that"
    )
    assert refusal("implication", {**entry, "base": "frank_r"}) is None


@pytest.mark.parametrize(
    ("kind", "entry", "other"),
    [  # equal in value, not in gradient: the families' t-norm takes it at max(x, EPS)
        ("tnorm", {"name": "frank", "p": 1.0}, {"name": "product"}),
        ("tnorm", {"name": "schweizer_sklar", "p": 1.0}, {"name": "lukasiewicz"}),
        # Schweizer-Sklar p = 1 is Lukasiewicz in exact arithmetic, not at float corners
        ("tconorm", {"name": "schweizer_sklar", "p": 1.0}, {"name": "lukasiewicz"}),
        ("forall", {"name": "schweizer_sklar", "p": 1.0}, {"name": "lukasiewicz"}),
        ("implication", {"name": "schweizer_sklar_r", "p": 1.0}, {"name": "lukasiewicz"}),
        # equal in exact arithmetic, not in float
        ("tconorm", {"name": "frank", "p": 1.0}, {"name": "product"}),
        ("implication", {"name": "frank_r", "p": 1.0}, {"name": "goguen"}),
        ("implication", {"name": "frank_s", "p": 1.0}, {"name": "reichenbach"}),
        ("forall", {"name": "hamacher", "p": 1.0}, {"name": "product"}),
        ("forall", {"name": "yager", "p": 1.0}, {"name": "lukasiewicz"}),
        ("exists", {"name": "schweizer_sklar", "p": 1.0}, {"name": "bounded_sum"}),
    ],
)
def test_an_operator_equal_to_another_only_in_the_limit_or_in_value_is_its_own(kind, entry, other):
    mine, theirs = outputs(kind, entry, torch.float32), outputs(kind, other, torch.float32)
    assert not all(torch.equal(x, y) for x, y in zip(mine, theirs, strict=True))
    assert refusal(kind, entry) is None
