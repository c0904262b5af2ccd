"""What a knowledge base means for the model (Section 9.2): its binary predicates, the batch's
interpretation and the crisp labels, all read from the knowledge-base registry (`logic.KBS`).

The `kb` choice is a registered knowledge base (`same`, `sum9`, `both`, ...) or `ce_only`, the
cross-entropy baseline without predicates (conf/kb/ce_only.yaml).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F
from torch import Tensor

from dfl_bench.logic import KBS
from dfl_bench.logic.kb_registry import DIGIT, pair_truths
from dfl_bench.logic.predicates import DIGITS
from dfl_bench.tasks.values import CE_ONLY


def kb_names() -> list[str]:
    """Every valid `kb.name`: `ce_only` and the registered knowledge bases."""
    return [CE_ONLY, *KBS]


def predicates(kb: str) -> tuple[str, ...]:
    """The binary predicates of a knowledge base (one NTN head each, in order); none for
    `ce_only`."""
    if kb == CE_ONLY:
        return ()
    if kb not in KBS:
        raise ValueError(f"unknown knowledge base {kb!r}; valid choices: {kb_names()}")
    return KBS[kb].predicates


def pair_truth(name: str, y: Tensor) -> Tensor:
    """Crisp truth (..., b, b) of a binary predicate from the digit labels y (..., b), entry
    (i, j) for the pair (x_i, x_j), as its knowledge base defines it (e.g. same: y_i == y_j)."""
    truths = pair_truths()
    if name not in truths:
        raise ValueError(f"unknown binary predicate {name!r}; valid choices: {sorted(truths)}")
    return truths[name](y[..., :, None], y[..., None, :])


def interpretation(digit_logits: Tensor, pair_logits: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """The batch's interpretation (DEVELOPERS.md): softmax digits, sigmoid pairs, in float32."""
    interp = {DIGIT: torch.softmax(digit_logits.float(), dim=-1)}
    interp.update({k: torch.sigmoid(v.float()) for k, v in pair_logits.items()})
    return interp


def crisp_labels(y: Tensor, names: tuple[str, ...]) -> dict[str, Tensor]:
    """Labels for the metrics: one-hot digits and crisp {0, 1} pair truths (DEVELOPERS.md)."""
    labels = {DIGIT: F.one_hot(y, len(DIGITS)).float()}
    labels.update({p: pair_truth(p, y).float() for p in names})
    return labels
