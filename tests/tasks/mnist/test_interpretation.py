"""The knowledge bases as the model reads them (the registry): predicates, pair truths, labels,
new KBs."""

from __future__ import annotations

import pytest
import torch

from dfl_bench.logic import KBS, Family, Forall, Predicate, Var, build_kb, knowledge_base
from dfl_bench.tasks.mnist.dfl_run import DFLRun
from dfl_bench.tasks.mnist.interpretation import (
    CE_ONLY,
    crisp_labels,
    kb_names,
    pair_truth,
    predicates,
)

x, y = Var("x"), Var("y")
less = Predicate("precedes", 2)  # not the guide's `less` (DEVELOPERS.md), which may be added
OPS = {
    "tnorm": {"name": "product"},
    "tconorm": {"name": "product"},
    "implication": {"name": "reichenbach"},
    "forall": {"name": "log_product", "reduction": "mean"},
    "exists": {"name": "probabilistic_sum"},
}


def smaller(y_i: torch.Tensor, y_j: torch.Tensor) -> torch.Tensor:
    return y_i < y_j


@pytest.fixture
def registry():
    """Restore the registry after a test registers knowledge bases."""
    saved = dict(KBS)
    yield KBS
    KBS.clear()
    KBS.update(saved)


def test_pair_truth():
    y = torch.tensor([1, 8, 1, 4])
    assert pair_truth("same", y)[0].tolist() == [True, False, True, False]
    assert pair_truth("sum9", y)[0].tolist() == [False, True, False, False]
    with pytest.raises(ValueError, match="valid choices"):
        pair_truth("precedes", y)


def test_pair_truth_batched_equals_per_row():
    y = torch.randint(0, 10, (3, 64), generator=torch.Generator().manual_seed(0))
    for predicate in ("same", "sum9"):
        batched = pair_truth(predicate, y)
        assert torch.equal(batched, torch.stack([pair_truth(predicate, row) for row in y]))


def test_kb_names_are_ce_only_and_the_registered_kbs():
    assert kb_names()[:4] == [CE_ONLY, "same", "sum9", "both"]  # then any KB added later
    assert [predicates(p) for p in kb_names()[:4]] == [(), ("same",), ("sum9",), ("same", "sum9")]
    with pytest.raises(ValueError, match="valid choices"):
        predicates("precedes")


def test_a_new_kb_with_a_new_binary_predicate_is_one_decorated_function(registry):
    @knowledge_base("ranking", truths={less: smaller})
    def order_kb() -> tuple[Family, ...]:
        return (Family("ranking/1", Forall((x, y), less(x, y) >> ~less(y, x))),)

    y_ = torch.tensor([3, 1, 7])
    assert "ranking" in kb_names() and predicates("ranking") == ("precedes",)
    assert pair_truth("precedes", y_)[0].tolist() == [False, False, True]
    labels = crisp_labels(y_, predicates("ranking"))
    assert labels["precedes"].sum() == 3 and labels["digit"].shape == (3, 10)
    module = DFLRun("ranking", OPS, w_dfl=1.0)
    assert list(module.net.heads) == ["precedes"]
    result = build_kb("ranking", formulas=[1])({"precedes": torch.rand(3, 3)}, module.ops, labels)
    assert set(result.formula_valuations) == {"ranking/1"} and result.metrics is not None


def test_registration_checks_the_truths(registry):
    family = (Family("bad/1", Forall((x, y), less(x, y))),)
    with pytest.raises(ValueError, match="give exactly their crisp truths"):
        knowledge_base("bad", truths={})(lambda: family)
    with pytest.raises(ValueError, match="exists"):
        knowledge_base("same", truths={less: smaller})(lambda: family)
    knowledge_base("first", truths={less: smaller})(lambda: family)
    with pytest.raises(ValueError, match="another crisp truth"):
        knowledge_base("second", truths={less: lambda a, b: a > b})(lambda: family)
