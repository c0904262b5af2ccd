"""The LightningModule of the semi-supervised MNIST experiment (Section 9.3, Eq. "loss").

Loss of one step (labeled batch D_l, unlabeled batch D_u, 64 images each)::

    w_dfl * L_DFL(D_u, K)  +  CE(D_l)  +  sum over binary predicates of BCE(pairs of D_l x D_l)

* L_DFL is `kb(interp, ops).loss` on the unlabeled batch, interp = {"digit": softmax (b, 10),
  and per binary predicate of the knowledge base (e.g. "same"): sigmoid(NTN) (b, b)}
  (`interpretation.interpretation`). It is skipped entirely when w_dfl = 0.
* CE is the mean cross-entropy over the labeled batch.
* The pair loss is the mean BCE over all b*b ordered labeled pairs (the diagonal included) that
  are positive, plus as many negatives drawn uniformly without replacement (the run's own RNG,
  `DFLModule.generator`); the negatives are undersampled as Section 9.3 says.
* kb="ce_only" has no NTN head: the loss is CE only (conf/kb/ce_only.yaml). The paper's purely
  supervised baseline (95.18%) is kb="same" with w_dfl=0: CE + the pair loss
  (conf/kb/ce_pair.yaml).

Logging (`log_every`, aligned with the Trainer's `log_every_n_steps`): the losses and, from
`kb(interp, ops, labels=...)` with the unlabeled batch's labels, the Section 9.1 metrics
("metrics/<name>"). Step n is the n-th optimizer update; logging steps are n % log_every == 0.
Evaluation (every `eval_every` steps and at the last step, written to the loggers directly):
test digit accuracy and, per head, the balanced pair accuracy (mean of the accuracy on positive
and on negative pairs) over all ordered pairs within consecutive blocks of 64 test images.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from dfl_bench.logic import build_kb
from dfl_bench.logic.kb import KBResult, KnowledgeBase
from dfl_bench.logic.metrics import MAGNITUDES, ratios
from dfl_bench.operators import OperatorSet
from dfl_bench.run.interpretation import crisp_labels, interpretation, pair_truth, predicates
from dfl_bench.run.model import DFLNet, dropout_masks
from dfl_bench.run.optim import configure, optimizer_kwargs
from dfl_bench.schema import BEST_TEST_ACCURACY, CONS_RATIO, CU_ANT, CU_CONS, TEST_ACCURACY

LOSS_TERMS = ("dfl", "ce", "pair")
LOSS_KEYS = ("loss/total", *(f"loss/{term}" for term in LOSS_TERMS))  # logged on logging steps
PAIR_BLOCK = 64
TRAINING_STREAM = 1  # run_seed stream of the dropout masks and the negative pairs


class NonFiniteLossError(RuntimeError):
    """A loss term became NaN or infinite; carries the (1-based) step and the term."""

    def __init__(self, step: int, term: str) -> None:
        super().__init__(f"loss term '{term}' is not finite at step {step}")
        self.step, self.term = step, term


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
    the part of a step that `DFLModule.compile_dfl` compiles."""
    return kb(interpretation(digit_logits, pair_logits), ops).loss


def run_seed(seed: int, stream: int) -> int:
    """A 63-bit seed for one random stream of a run (numpy's SeedSequence of (seed, stream)), so
    that a run's streams are independent of each other and of the data stream's `seed`."""
    return int(np.random.SeedSequence([seed, stream]).generate_state(1, np.uint64)[0] >> 1)


def evaluation_step(step: int, max_steps: int, eval_every: int) -> bool:
    """Whether the test set is evaluated after `step`: every `eval_every` steps (0: never) and at
    the last step."""
    return step >= max_steps or (eval_every > 0 and step % eval_every == 0)


def flag_nonfinite(bad: Tensor, step: int | Tensor, terms: Tensor) -> None:
    """Keep in `bad` (..., 2) the first step and term index (LOSS_TERMS) whose loss term in
    `terms` (..., 3) is not finite; in place and without a host sync (graph-capturable)."""
    nonfinite = ~torch.isfinite(terms.detach())
    first = torch.stack(
        [torch.zeros_like(nonfinite[..., 0], dtype=torch.long) + step, nonfinite.long().argmax(-1)],
        -1,
    )
    new = (bad[..., 0] < 0) & nonfinite.any(-1)
    bad.copy_(torch.where(new.unsqueeze(-1), first, bad))


def _tail_steps(metrics_tail: float, max_steps: int) -> int:
    """Steps in the metrics window: a fraction of max_steps if < 1, else a number of steps."""
    if metrics_tail <= 0:
        raise ValueError(f"metrics_tail must be > 0 (a fraction < 1 or steps), got {metrics_tail}")
    if metrics_tail < 1:
        return max(1, math.ceil(metrics_tail * max_steps))
    return int(metrics_tail)


class EvaluationSchedule:
    """The test evaluations of a module (a run or a stack of runs): every `eval_every` steps and
    at the last, each step once; the module gives `at_last_step()` (its NaN policy's last word)
    and `evaluate_at(step)`."""

    global_step: int
    evaluated_step: int
    max_steps: int
    eval_every: int

    def at_last_step(self) -> None:
        raise NotImplementedError

    def evaluate_at(self, step: int) -> None:
        raise NotImplementedError

    def evaluate_if_due(self) -> None:
        """This step's evaluation (if it is an evaluation step), once: a checkpoint callback calls
        it before saving, so a checkpoint holds the state after its step's evaluation."""
        step = self.global_step
        if step == self.evaluated_step:
            return
        if step >= self.max_steps:
            self.at_last_step()
        if evaluation_step(step, self.max_steps, self.eval_every):
            self.evaluate_at(step)
            self.evaluated_step = step


class RunModule(EvaluationSchedule, L.LightningModule):
    """What every task's module shares (dfl_bench/tasks/): its own random stream (`generator`),
    the NaN policy (`_bad`, the first non-finite loss term of TERMS; raised at logging steps and
    at the end) and the evaluation schedule (`evaluate_if_due`, every `eval_every` steps and at
    the last; the subclass gives `evaluate(batches)`)."""

    TERMS: tuple[str, ...] = LOSS_TERMS

    def __init__(self, seed: int, eval_every: int, max_steps: int | None) -> None:
        super().__init__()
        self.seed, self.eval_every, self.max_steps = seed, eval_every, max_steps
        self._generator: torch.Generator | None = None
        self._generator_state: Tensor | None = None  # from a checkpoint, set on first use
        # first bad step and term index; a buffer, so it follows the module to its device
        self.register_buffer("_bad", torch.full((2,), -1, dtype=torch.long), persistent=False)
        self.evaluated_step = -1  # the step of the last test evaluation

    def generator(self) -> torch.Generator:
        """The run's own RNG for dropout and negative pairs (seeded by `run_seed(seed, 1)`, kept
        in checkpoints): a run's draws do not depend on what else the process runs."""
        if self._generator is None or self._generator.device != self.device:
            self._generator = torch.Generator(self.device)
            self._generator.manual_seed(run_seed(self.seed, TRAINING_STREAM))
            if self._generator_state is not None:
                self._generator.set_state(self._generator_state)
                self._generator_state = None
        return self._generator

    def _raise_if_bad(self) -> None:
        """Raise NonFiniteLossError if any loss term was flagged (one host sync)."""
        step, term = self._bad.tolist()
        if step >= 0:
            raise NonFiniteLossError(step, self.TERMS[term])

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        """Evaluate on the test set every `eval_every` steps and at the last step."""
        self.evaluate_if_due()

    def at_last_step(self) -> None:
        self._raise_if_bad()

    def evaluate_at(self, step: int) -> None:
        """The test metrics now, to every logger."""
        results = self.evaluate(self.trainer.datamodule.test_batches(self.device))
        for logger in self.loggers:
            logger.log_metrics({f"test/{k}": v for k, v in results.items()}, step=step)

    def evaluate(self, batches: list[tuple[Tensor, ...]]) -> dict[str, float]:
        """The task's test metrics (its subclass's)."""
        raise NotImplementedError


class DFLModule(RunModule):
    """One module for every knowledge base (`interpretation.kb_names()`: `ce_only` and each
    registered one, e.g. `same`, `sum9`, `both`; Section 9.3); `kb_options` select and weigh
    its formulas (`logic.build_kb`)."""

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
    ) -> None:
        super().__init__(seed, eval_every, max_steps)
        binary = predicates(kb)
        if log_every < 1 or eval_every < 0:
            raise ValueError(f"need log_every >= 1, eval_every >= 0; got {log_every}, {eval_every}")
        if w_dfl < 0:
            raise ValueError(f"w_dfl must be >= 0, got {w_dfl}")
        self.kb_name, self.predicates = kb, binary
        self.w_dfl = float(w_dfl) if self.predicates else 0.0
        self.optimizer_cfg = dict(optimizer or {"name": "adam"})
        optimizer_kwargs(self.optimizer_cfg)
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
        self.net = DFLNet(self.predicates, ntn_k, ntn_bias)
        self.log_every, self.metrics_tail = log_every, metrics_tail
        self._tail = torch.zeros(len(MAGNITUDES), dtype=torch.float64)
        self._tail_logs = 0
        self.accuracy: float | None = None
        self.best_accuracy: float | None = None
        self.pair_accuracy: dict[str, float] = {}
        self._dfl_term = dfl_term  # compiled by `compile_dfl`

    def compile_dfl(self, runs: int = 1) -> None:
        """Compile the DFL term of steps without metrics (`torch.compile`: the KB's few hundred
        elementwise kernels fused into a few), for `runs` runs of distinct operators in this
        process (one compiled entry each); logging steps' metrics stay eager."""
        limit = torch._dynamo.config.recompile_limit
        torch._dynamo.config.recompile_limit = max(limit, runs + 1)
        self._dfl_term = torch.compile(dfl_term, dynamic=False, fullgraph=True)

    def configure_optimizers(self) -> torch.optim.Optimizer | dict[str, Any]:
        """ADAM or SGD as configured (Section 9.3, appendix), with its schedule if any."""
        return configure(self.parameters(), self.optimizer_cfg, self.max_steps or 1)

    def on_fit_start(self) -> None:
        """Check the step budget, logging cadence and test data the module relies on."""
        trainer = self.trainer
        if self.max_steps is None:
            if trainer.max_steps is None or trainer.max_steps < 1:
                raise ValueError("DFLModule needs max_steps (or Trainer(max_steps=...))")
            self.max_steps = trainer.max_steps
        if trainer.loggers and trainer.log_every_n_steps != self.log_every:
            raise ValueError(
                f"Trainer(log_every_n_steps={trainer.log_every_n_steps}) must equal the module's "
                f"log_every={self.log_every}, or the logged metrics are dropped"
            )
        if not hasattr(trainer.datamodule, "test_batches"):
            raise ValueError(
                "DFLModule evaluates on `datamodule.test_batches`; use MnistDataModule"
            )

    def transfer_batch_to_device(
        self, batch: Any, device: torch.device, dataloader_idx: int
    ) -> Any:
        """Skip the per-step collection walk when the batch is already on `device` (our stream)."""
        if isinstance(batch, Mapping) and all(
            t.device == device for pair in batch.values() for t in pair
        ):
            return batch
        return super().transfer_batch_to_device(batch, device, dataloader_idx)

    def forward(self, x: Tensor) -> Tensor:
        """Images -> digit class logits."""
        return self.net(x)[0]

    def _pair_logits(self, e_l: Tensor, e_u: Tensor) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
        """All-pairs logits per head on the labeled and unlabeled batch (one call if equal size)."""
        if e_l.shape == e_u.shape:
            both = self.net.pair_logits(torch.stack([e_l, e_u]))
            return {k: v[0] for k, v in both.items()}, {k: v[1] for k, v in both.items()}
        return self.net.pair_logits(e_l), self.net.pair_logits(e_u)

    def training_step(self, batch: Mapping[str, tuple[Tensor, Tensor]], batch_idx: int) -> Tensor:
        """Eq. "loss" on one labeled and one unlabeled batch; metrics on logging steps only."""
        step = self.global_step + 1
        logging = step % self.log_every == 0
        total, terms, metrics = self.step_loss(batch, logging)
        flag_nonfinite(self._bad, step, terms)
        if logging:
            self._log_step(step, total, *terms.unbind(), metrics, len(batch["unlabeled"][0]))
        return total

    def step_loss(
        self, batch: Mapping[str, tuple[Tensor, Tensor]], logging: bool
    ) -> tuple[Tensor, Tensor, Mapping[str, float] | None]:
        """This run's Eq. "loss" with its own network on its batch (`loss`); without a DFL term no
        loss reads the unlabeled images, so only the labeled ones are forwarded."""
        (x_l, y_l), (x_u, y_u) = batch["labeled"], batch["unlabeled"]
        x = torch.cat([x_l, x_u]) if self.kb is not None else x_l
        rng = self.generator()
        logits, emb = self.net(x, dropout_masks(len(x), x.device, rng))
        n_l = len(x_l)
        pl, pu = self._pair_logits(emb[:n_l], emb[n_l:]) if self.predicates else ({}, {})
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

    def _log_step(
        self,
        step: int,
        total: Tensor,
        dfl: Tensor,
        ce: Tensor,
        pair: Tensor,
        metrics: Mapping[str, float] | None,
        batch_size: int,
    ) -> None:
        """Log the losses and the KB metrics; accumulate the magnitudes of the final window."""
        self._raise_if_bad()
        losses = dict(zip(LOSS_KEYS, (total, dfl, ce, pair), strict=True))
        self.log_dict({k: v.detach() for k, v in losses.items()}, batch_size=batch_size)
        if metrics is None:
            return
        self.log_dict({f"metrics/{k}": float(v) for k, v in metrics.items()}, batch_size=batch_size)
        self.accumulate_tail(step, metrics)

    def accumulate_tail(self, step: int, metrics: Mapping[str, float]) -> None:
        """Add a logging step's magnitudes to the final `metrics_tail` window (Section 9.1)."""
        if step > self.max_steps - _tail_steps(self.metrics_tail, self.max_steps):
            self._tail += torch.tensor([metrics[k] for k in MAGNITUDES], dtype=torch.float64)
            self._tail_logs += 1

    @torch.inference_mode()
    def evaluate(self, batches: list[tuple[Tensor, Tensor]]) -> dict[str, float]:
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

    def summary(self) -> dict[str, Any]:
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
            "steps": self.global_step,
            "evaluated_step": self.evaluated_step,
        }

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Keep the summary's accumulators in the checkpoint, so a resumed run reports the same."""
        checkpoint["dfl_summary_state"] = {
            "tail": self._tail.tolist(),
            "tail_logs": self._tail_logs,
            TEST_ACCURACY: self.accuracy,
            BEST_TEST_ACCURACY: self.best_accuracy,
            "pair_accuracy": dict(self.pair_accuracy),
            "evaluated_step": self.evaluated_step,
            "generator": self.generator().get_state(),
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Restore the accumulators saved by `on_save_checkpoint`."""
        state = checkpoint.get("dfl_summary_state")
        if state is None:
            return
        self._tail = torch.tensor(state["tail"], dtype=torch.float64)
        self._tail_logs = state["tail_logs"]
        self.accuracy = state[TEST_ACCURACY]
        self.best_accuracy = state[BEST_TEST_ACCURACY]
        self.pair_accuracy = dict(state["pair_accuracy"])
        self.evaluated_step = state.get("evaluated_step", -1)
        self._generator, self._generator_state = None, state.get("generator")
