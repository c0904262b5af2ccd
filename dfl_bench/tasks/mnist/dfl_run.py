"""One run of the paper's task: the semi-supervised MNIST model of Section 9.3 (Eq. "loss"), a
`TaskRun` (tasks/contract.py) that `training.RunsModule` trains alone or in a stack.

Loss of one step (labeled batch D_l, unlabeled batch D_u, 64 images each)::

    w_dfl * L_DFL(D_u, K)  +  CE(D_l)  +  sum over binary predicates of BCE(pairs of D_l x D_l)

* L_DFL is `kb(interp, ops).loss` on the unlabeled batch, interp = {"digit": softmax (b, 10),
  and per binary predicate of the knowledge base (e.g. "same"): sigmoid(NTN) (b, b)}
  (`interpretation.interpretation`). It is skipped entirely when w_dfl = 0.
* CE is the mean cross-entropy over the labeled batch.
* The pair loss is the mean BCE over all b*b ordered labeled pairs (the diagonal included) that
  are positive, plus as many negatives drawn uniformly without replacement (the run's own RNG,
  `TaskRun.generator`); the negatives are undersampled as Section 9.3 says.
* kb="ce_only" has no NTN head: the loss is CE only (conf/kb/ce_only.yaml). The paper's purely
  supervised baseline (95.18%) is kb="same" with w_dfl=0: CE + the pair loss
  (conf/kb/ce_pair.yaml).

On logging steps (step n % log_every == 0, n the n-th optimizer update) the step also gives,
from `kb(interp, ops, labels=...)` with the unlabeled batch's labels, the Section 9.1 metrics.
Evaluation: test digit accuracy and, per head, the balanced pair accuracy (mean of the accuracy
on positive and on negative pairs) over all ordered pairs within consecutive blocks of 64 test
images.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from dfl_bench.checks import number, tail_steps
from dfl_bench.logic import build_kb
from dfl_bench.logic.kb import KBResult, KnowledgeBase
from dfl_bench.logic.metrics import MAGNITUDES, ratios
from dfl_bench.operators import OperatorSet
from dfl_bench.schema import (
    BEST_TEST_ACCURACY,
    BEST_VALIDATION_ACCURACY,
    CONS_RATIO,
    CU_ANT,
    CU_CONS,
    TEST_ACCURACY,
    TEST_AT_BEST_VALIDATION,
    VALIDATION_ACCURACY,
    VALIDATION_FIELDS,
)
from dfl_bench.tasks.contract import TaskRun
from dfl_bench.tasks.mnist.augment import augmented, is_on
from dfl_bench.tasks.mnist.interpretation import (
    crisp_labels,
    interpretation,
    pair_truth,
    predicates,
)
from dfl_bench.tasks.mnist.nets import MnistNet, dropout_masks
from dfl_bench.tasks.mnist.ntn import DFLNet
from dfl_bench.tasks.mnist.stack_net import StackNet
from dfl_bench.tasks.values import PAIR_BLOCK

Outputs = tuple[Tensor, dict[str, Tensor], dict[str, Tensor]]  # grouped: logits, pairs l / u


def undersampled_bce(
    logits: Tensor, target: Tensor, generator: torch.Generator | None = None
) -> Tensor:
    """Mean BCE over the positive pairs and as many random negatives (Section 9.3), no host sync;
    the negatives are drawn from `generator` (torch's global RNG if None)."""
    z, pos = logits.flatten(), target.flatten()
    keys = torch.rand(z.shape, device=z.device, generator=generator).masked_fill(pos, 2.0)
    order = torch.argsort(keys)
    rank = torch.empty_like(order).scatter_(0, order, torch.arange(len(z), device=z.device))
    chosen = (pos | (rank < pos.sum())).to(z.dtype)
    bce = F.binary_cross_entropy_with_logits(z, pos.to(z.dtype), reduction="none")
    return (bce * chosen).sum() / chosen.sum().clamp_min(1.0)


def dfl_term(
    kb: KnowledgeBase, ops: OperatorSet, digit_logits: Tensor, pair_logits: Mapping[str, Tensor]
) -> Tensor:
    """L_DFL (Eq. "lossrl") of the unlabeled batch from the network's outputs, without metrics:
    the part of a step that `DFLRun.compile_dfl` compiles."""
    return kb(interpretation(digit_logits, pair_logits), ops).loss


def both_pair_logits(
    pair_logits: Callable[[Tensor], dict[str, Tensor]], e_l: Tensor, e_u: Tensor, dim: int
) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """All-pairs logits per head on the labeled and the unlabeled embeddings, in one call when
    the two batches have one size (stacked along `dim`: 0 for one run, 1 for a stack's runs)."""
    if e_l.shape != e_u.shape:
        return pair_logits(e_l), pair_logits(e_u)
    both = pair_logits(torch.stack([e_l, e_u], dim=dim))
    return tuple({k: v.select(dim, i) for k, v in both.items()} for i in (0, 1))


class DFLRun(TaskRun):
    """One run for every knowledge base (`interpretation.kb_names()`: `ce_only` and each
    registered one, e.g. `same`, `sum9`, `both`; Section 9.3); `kb_options` select and weigh
    its formulas (`logic.build_kb`)."""

    TERMS = ("dfl", "ce", "pair")
    GROUPED = True

    def __init__(
        self,
        kb: str,
        operators: OperatorSet | Mapping[str, Mapping[str, Any]] | None = None,
        w_dfl: float = 1.0,
        optimizer: Mapping[str, Any] | None = None,
        kb_options: Mapping[str, Any] | None = None,
        ntn_k: int = 50,
        ntn_bias: bool = False,
        log_every: int = 50,
        eval_every: int = 1000,
        metrics_tail: float = 0.1,
        max_steps: int | None = None,
        seed: int = 0,
        net: Mapping[str, Any] | None = None,
        augment: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(seed, optimizer, log_every, eval_every, max_steps)
        binary = predicates(kb)
        number(w_dfl, "kb.w_dfl", 0.0, open_low=False)
        self.kb_name, self.predicates = kb, binary
        self.w_dfl = float(w_dfl) if self.predicates else 0.0
        self.kb: KnowledgeBase | None = None
        self.ops = None
        if self.w_dfl > 0:
            if operators is None:
                raise ValueError(f"knowledge base {kb!r} with w_dfl > 0 needs operators")
            self.ops = (
                operators
                if isinstance(operators, OperatorSet)
                else OperatorSet.from_config(operators)
            )
            self.kb = build_kb(kb, **dict(kb_options or {}))
        self.net = DFLNet(self.predicates, ntn_k, ntn_bias, net)
        self.augment = dict(augment or {})
        # the grouped layout (a GPU stack's StackNet) is the paper network's, unaugmented
        self.GROUPED = type(self.net.digits) is MnistNet and not is_on(self.augment)
        self.metrics_tail = metrics_tail
        self._tail = torch.zeros(len(MAGNITUDES), dtype=torch.float64)
        self._tail_logs = 0
        self.accuracy: float | None = None
        self.best_accuracy: float | None = None
        self.pair_accuracy: dict[str, float] = {}
        self.validation: dict[str, float | None] = dict.fromkeys(VALIDATION_FIELDS)
        self._dfl_term = dfl_term  # compiled by `compile_dfl`

    def compile_dfl(self, runs: int = 1) -> None:
        """Compile the DFL term of steps without metrics (`torch.compile`: the KB's few hundred
        elementwise kernels fused into a few), for `runs` runs of distinct operators in this
        process (one compiled entry each); logging steps' metrics stay eager."""
        limit = torch._dynamo.config.recompile_limit
        torch._dynamo.config.recompile_limit = max(limit, runs + 1)
        self._dfl_term = torch.compile(dfl_term, dynamic=False, fullgraph=True)

    def forward(self, x: Tensor) -> Tensor:
        """Images -> digit class logits."""
        return self.net(x)[0]

    def step_loss(
        self, batch: Mapping[str, tuple[Tensor, Tensor]], logging: bool
    ) -> tuple[Tensor, Tensor, Mapping[str, float] | None]:
        """This run's Eq. "loss" with its own network on its batch (`loss`); without a DFL term no
        loss reads the unlabeled images, so only the labeled ones are forwarded."""
        (x_l, y_l), (x_u, y_u) = batch["labeled"], batch["unlabeled"]
        x = torch.cat([x_l, x_u]) if self.kb is not None else x_l
        rng = self.generator()
        logits, emb = self.net(augmented(x, self.augment, rng), rng)
        n_l = len(x_l)
        pairs = self.net.pair_logits
        pl, pu = both_pair_logits(pairs, emb[:n_l], emb[n_l:], 0) if self.predicates else ({}, {})
        return self.loss(logits, pl, pu, y_l, y_u, rng, logging)

    def loss(
        self,
        logits: Tensor,
        pair_l: Mapping[str, Tensor],
        pair_u: Mapping[str, Tensor],
        y_l: Tensor,
        y_u: Tensor,
        rng: torch.Generator,
        logging: bool,
    ) -> tuple[Tensor, Tensor, Mapping[str, float] | None]:
        """Eq. "loss" from the network's outputs (logits of the labeled then the unlabeled images,
        each head's all-pairs logits on both batches): the total, the terms [dfl, ce, pair] and,
        on logging steps, the Section 9.1 metrics. The one step definition of a run alone and of
        a run in a stack; the negatives are drawn from `rng`."""
        n_l = len(y_l)
        ce = F.cross_entropy(logits[:n_l], y_l)
        zero = ce.new_zeros(())
        pair, dfl, metrics = zero, zero, None
        if self.predicates:
            pair = sum(
                undersampled_bce(pair_l[p], pair_truth(p, y_l), rng) for p in self.predicates
            )
            if self.kb is not None and logging:
                result = self._labelled_kb(logits[n_l:], pair_u, y_u)
                dfl, metrics = result.loss, result.metrics
            elif self.kb is not None:
                dfl = self._dfl_term(self.kb, self.ops, logits[n_l:], pair_u)
        total = self.w_dfl * dfl + ce + pair
        return total, torch.stack([dfl, ce, pair]), metrics

    @classmethod
    def grouped_net(cls, members: Sequence[TaskRun], compile_dfl: bool) -> StackNet:
        """The runs' networks as one StackNet (grouped convolutions, vmapped heads); with
        `compile_dfl` each run's DFL term compiled. The runs all have a DFL term or all none."""
        runs = [m for m in members if isinstance(m, DFLRun)]
        if len({m.kb is None for m in runs}) != 1 or len(runs) != len(members):
            raise ValueError("grouped runs must all have a DFL term (w_dfl > 0) or all none")
        if compile_dfl and runs[0].kb is not None:
            for run in runs:
                run.compile_dfl(runs=len(runs))
        return StackNet([run.net for run in runs])

    @classmethod
    def grouped_outputs(cls, net: StackNet, members: Sequence[TaskRun], batch: Any) -> Outputs:
        """Every run's digit logits (R, n_l + n_u, 10) and each head's all-pairs logits on the
        labeled and on the unlabeled images (R, b, b), each run's dropout from its generator."""
        (x_l, _), (x_u, _) = batch["labeled"], batch["unlabeled"]
        first = members[0]
        x = torch.cat([x_l, x_u], dim=1) if first.kb is not None else x_l
        drawn = [dropout_masks(x.shape[1], x.device, m.generator()) for m in members]
        logits, emb = net(x, tuple(torch.stack(m) for m in zip(*drawn, strict=True)))
        n_l = x_l.shape[1]
        if not first.predicates:
            return logits, {}, {}
        return logits, *both_pair_logits(net.pair_logits, emb[:, :n_l], emb[:, n_l:], 1)

    def grouped_loss(
        self, outputs: Outputs, r: int, batch: Any, logging: bool
    ) -> tuple[Tensor, Tensor, Mapping[str, float] | None]:
        """`loss` of run `r` of a stack from the grouped outputs."""
        logits, pl, pu = outputs
        y_l, y_u = batch["labeled"][1][r], batch["unlabeled"][1][r]
        pair_l, pair_u = {k: v[r] for k, v in pl.items()}, {k: v[r] for k, v in pu.items()}
        return self.loss(logits[r], pair_l, pair_u, y_l, y_u, self.generator(), logging)

    def grouped_metrics(self, outputs: Outputs, r: int, batch: Any) -> dict[str, float] | None:
        """`metrics` of run `r` from the grouped outputs on the unlabeled images (detached)."""
        logits, _, pu = outputs
        n_l = batch["labeled"][0].shape[1]
        pair_u = {k: v[r].detach() for k, v in pu.items()}
        return self.metrics(logits[r, n_l:].detach(), pair_u, batch["unlabeled"][1][r])

    def metrics(
        self, digit_logits: Tensor, pair_logits: Mapping[str, Tensor], y: Tensor
    ) -> dict[str, float] | None:
        """The Section 9.1 metrics of a logging step from the network's outputs on the unlabeled
        batch and its labels (what `loss` computes with them; None without a DFL term)."""
        return None if self.kb is None else self._labelled_kb(digit_logits, pair_logits, y).metrics

    def _labelled_kb(
        self, digit_logits: Tensor, pair_logits: Mapping[str, Tensor], y: Tensor
    ) -> KBResult:
        """The KB on the unlabeled batch with its labels: Eq. "lossrl" and the Section 9.1
        metrics from one forward graph."""
        interp = interpretation(digit_logits, pair_logits)
        return self.kb(interp, self.ops, labels=crisp_labels(y, self.predicates))

    def accumulate(self, step: int, metrics: Mapping[str, float]) -> None:
        """Add a logging step's magnitudes to the final `metrics_tail` window (Section 9.1)."""
        if step > self.max_steps - tail_steps(self.metrics_tail, self.max_steps):
            self._tail += torch.tensor([metrics[k] for k in MAGNITUDES], dtype=torch.float64)
            self._tail_logs += 1

    def evaluate(
        self, batches: list[tuple[Tensor, Tensor]] | Mapping[str, list[tuple[Tensor, Tensor]]]
    ) -> dict[str, float]:
        """Test digit accuracy and balanced pair accuracy per head, in eval mode (Section 10);
        given the splits of `data.validation` (a mapping), also the held-out images' digit
        accuracy, and the test accuracy kept at the best of it."""
        if not isinstance(batches, Mapping):
            return self.evaluate_test(batches)
        results = self.evaluate_test(batches["test"])
        if "validation" in batches:
            held = self.digit_accuracy(batches["validation"])
            v = self.validation
            if v[BEST_VALIDATION_ACCURACY] is None or held > v[BEST_VALIDATION_ACCURACY]:
                v[BEST_VALIDATION_ACCURACY], v[TEST_AT_BEST_VALIDATION] = held, self.accuracy
            v[VALIDATION_ACCURACY] = results[VALIDATION_ACCURACY] = held
        return results

    @torch.inference_mode()
    def digit_accuracy(self, batches: list[tuple[Tensor, Tensor]]) -> float:
        """The digit accuracy on `batches`, in eval mode."""
        was_training = self.training
        self.eval()
        correct = sum(int((self.net(x)[0].argmax(-1) == y).sum()) for x, y in batches)
        self.train(was_training)
        return correct / max(sum(len(y) for _, y in batches), 1)

    @torch.inference_mode()
    def evaluate_test(self, batches: list[tuple[Tensor, Tensor]]) -> dict[str, float]:
        """Test digit accuracy and balanced pair accuracy per head, in eval mode (Section 10)."""
        was_training = self.training
        self.eval()
        correct = torch.zeros((), device=self.device)
        n = 0
        pairs = {p: torch.zeros(4, device=self.device) for p in self.predicates}
        for x, y in batches:
            logits, emb = self.net(x)
            correct += (logits.argmax(-1) == y).sum()
            n += len(y)
            blocks = len(y) // PAIR_BLOCK * PAIR_BLOCK
            if not blocks:
                continue
            eb = emb[:blocks].reshape(-1, PAIR_BLOCK, emb.shape[-1])
            yb = y[:blocks].reshape(-1, PAIR_BLOCK)
            for p, logit in self.net.pair_logits(eb).items():
                truth = pair_truth(p, yb)
                pred = logit > 0
                pairs[p] += torch.stack(
                    [(pred & truth).sum(), truth.sum(), (~pred & ~truth).sum(), (~truth).sum()]
                )
        self.train(was_training)
        results = {"accuracy": (correct / max(n, 1)).item()}
        for p, (tp, pos, tn, neg) in ((p, c.tolist()) for p, c in pairs.items()):
            if pos and neg:
                results[f"pair_accuracy/{p}"] = 0.5 * (tp / pos + tn / neg)
        self.accuracy = results["accuracy"]
        self.best_accuracy = max(self.best_accuracy or 0.0, self.accuracy)
        self.pair_accuracy = {k.split("/")[1]: v for k, v in results.items() if "/" in k}
        return results

    def summary(self, optimizer: torch.optim.Optimizer | None = None) -> dict[str, Any]:
        """Run summary for the record: final/best test accuracy, pair accuracy, and the Section 9.1
        ratios from the magnitudes summed over the logging steps of the final `metrics_tail`."""
        tail = dict(zip(MAGNITUDES, self._tail.tolist(), strict=True))
        rates = ratios(tail) if self._tail_logs else {}
        pair = list(self.pair_accuracy.values())
        return {
            TEST_ACCURACY: self.accuracy,
            BEST_TEST_ACCURACY: self.best_accuracy,
            "pair_accuracy": sum(pair) / len(pair) if pair else None,
            **{f"pair_accuracy/{k}": v for k, v in self.pair_accuracy.items()},
            CONS_RATIO: rates.get(CONS_RATIO),
            CU_CONS: rates.get(CU_CONS),
            CU_ANT: rates.get(CU_ANT),
            **{k: (tail[k] if self._tail_logs else None) for k in MAGNITUDES},
            "metrics_logs": self._tail_logs,
            "evaluated_step": self.evaluated_step,
            **{k: v for k, v in self.validation.items() if v is not None},
        }

    def state(self) -> dict[str, Any]:
        """The summary's accumulators, so a resumed run reports the same."""
        return {
            **super().state(),
            "tail": self._tail.tolist(),
            "tail_logs": self._tail_logs,
            TEST_ACCURACY: self.accuracy,
            BEST_TEST_ACCURACY: self.best_accuracy,
            "pair_accuracy": dict(self.pair_accuracy),
            "validation": dict(self.validation),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Restore what `state` returned."""
        super().load_state(state)
        self._tail = torch.tensor(state["tail"], dtype=torch.float64)
        self._tail_logs = state["tail_logs"]
        self.accuracy = state[TEST_ACCURACY]
        self.best_accuracy = state[BEST_TEST_ACCURACY]
        self.pair_accuracy = dict(state["pair_accuracy"])
        self.validation = {**dict.fromkeys(VALIDATION_FIELDS), **state.get("validation", {})}
