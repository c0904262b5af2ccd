"""R runs of `DFLModule` trained as one LightningModule.

Each run keeps its own initialisation (its DFLModule, built after its seed), data order (its
TrainStream), dropout masks and negative pairs (drawn from its `DFLModule.generator()` in the
order `DFLModule.training_step` draws them), operators and knowledge base, logger and summary.
The networks run stacked (`StackedNet`); one optimizer over the stacked parameters is R
optimizers, since ADAM and SGD update elementwise, so the stack's loss is the sum of the runs'
Eq. "loss". The cross-entropy is batched; the pair losses run run by run (each run's
generator draws its negatives); the DFL term is one vmapped call when the runs share their
knowledge base and operators (a seed sweep) on steps without metrics, else run by run (rows of
a table), and the Section 9.1 metrics are always computed run by run.

A run whose loss turns NaN/inf is retired when a single run would have stopped (its first
logging step from then, or the last step): its summary is frozen there with the same reason,
its loss leaves the sum and its gradients are zeroed; the other runs go on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.loggers import Logger
from torch import Tensor
from torch.func import vmap

from dfl_bench.model import dropout_masks
from dfl_bench.module import (
    LOSS_TERMS,
    DFLModule,
    NonFiniteLossError,
    evaluation_step,
    undersampled_bce,
)
from dfl_bench.optim import build_optimizer
from dfl_bench.problems import DIGIT, crisp_labels, interpretation, pair_truth
from dfl_bench.stacked_net import StackedNet

SHARED = ("predicates", "optimizer_cfg", "log_every", "eval_every", "max_steps")


class StackedModule(L.LightningModule):
    """The runs `members` (DFLModules that agree on SHARED and on having a DFL term) as one;
    `shared_logic`: the runs have the same knowledge base and operators (w_dfl may differ), so
    that their DFL losses are one vmapped call on steps without metrics."""

    def __init__(
        self,
        members: Sequence[DFLModule],
        loggers: Sequence[Logger | None],
        poison_at: Sequence[int | None] = (),
        shared_logic: bool = False,
    ) -> None:
        super().__init__()
        first = members[0]
        for key in SHARED:
            values = [getattr(m, key) for m in members]
            if any(v != values[0] for v in values):
                raise ValueError(f"stacked runs must share {key}; got {values}")
        if len({m.kb is None for m in members}) != 1:
            raise ValueError("stacked runs must all have a DFL term (w_dfl > 0) or all none")
        if len(loggers) != len(members):
            raise ValueError(f"need one logger per run: {len(loggers)} for {len(members)} runs")
        self.members = list(members)  # a plain list: their own weights are not trained
        self.run_loggers = list(loggers)
        self.poison_at = list(poison_at) or [None] * len(members)
        self.net = StackedNet([m.net for m in members])
        self.predicates, self.unlabeled = first.predicates, first.kb is not None
        # one vmapped KB call for all runs (on a CPU as fast as R calls from R=4 on, measured;
        # slower for one run)
        self._vmap_kb = shared_logic and self.unlabeled and len(members) > 1
        self.register_buffer("w_dfl", torch.tensor([m.w_dfl for m in members]), persistent=False)
        self.log_every, self.eval_every = first.log_every, first.eval_every
        self.max_steps = first.max_steps
        # per run: first bad step and term index (as DFLModule._bad), on the training device
        self.register_buffer(
            "_bad", torch.full((len(members), 2), -1, dtype=torch.long), persistent=False
        )
        self.failures: list[str | None] = [None] * len(members)
        self.frozen: list[dict[str, Any] | None] = [None] * len(members)
        self.evaluated_step = -1
        self._pending: list[tuple[Logger, dict[str, float], int]] = []  # this step's run logs

    @property
    def alive(self) -> list[int]:
        """The runs not retired."""
        return [r for r, why in enumerate(self.failures) if why is None]

    def configure_optimizers(self) -> torch.optim.Optimizer:
        """The runs' optimizer (ADAM or SGD, Section 9.3) over the stacked parameters."""
        return build_optimizer(self.net.parameters(), self.members[0].optimizer_cfg)

    def on_fit_start(self) -> None:
        """Move the runs' modules (their generators, evaluation nets) to the training device."""
        if self.max_steps is None:
            raise ValueError("stacked runs need max_steps")
        if not hasattr(self.trainer.datamodule, "test_batches"):
            raise ValueError("StackedModule evaluates on `datamodule.test_batches`")
        for member in self.members:
            member.to(self.device)

    def transfer_batch_to_device(self, batch: Any, device: torch.device, idx: int) -> Any:
        """Skip the collection walk when the runs' batches are already on `device`."""
        tensors = [t for run in batch for pair in run.values() for t in pair]
        if all(t.device == device for t in tensors):
            return batch
        return super().transfer_batch_to_device(batch, device, idx)

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
        """Debug (`debug.nan_at_step` of a run): NaN weights for that run only, as alone."""
        for r, step in enumerate(self.poison_at):
            if step is not None and step == self.global_step:
                self.net.poison(r)

    def training_step(self, batch: Sequence[Mapping[str, tuple[Tensor, Tensor]]], idx: int):
        """Eq. "loss" of every run on its own batches, summed; per-run logging on logging steps."""
        step = self.global_step + 1
        logging = step % self.log_every == 0
        x_l, y_l = (torch.stack(t) for t in zip(*(run["labeled"] for run in batch), strict=True))
        x_u, y_u = (torch.stack(t) for t in zip(*(run["unlabeled"] for run in batch), strict=True))
        x = torch.cat([x_l, x_u], dim=1) if self.unlabeled else x_l
        drawn = [dropout_masks(x.shape[1], x.device, m.generator()) for m in self.members]
        logits, emb = self.net(x, tuple(torch.stack(m) for m in zip(*drawn, strict=True)))
        n_l = x_l.shape[1]
        ce = F.cross_entropy(logits[:, :n_l].flatten(0, 1), y_l.flatten(), reduction="none")
        ce = ce.view(len(self.members), n_l).mean(1)
        pair, dfl, metrics = torch.zeros_like(ce), torch.zeros_like(ce), {}
        if self.predicates:
            pl, pu = self._pair_logits(emb[:, :n_l], emb[:, n_l:])
            pair = self._pair_losses(pl, y_l)
            if self.unlabeled:
                dfl, metrics = self._dfl_losses(interpretation(logits[:, n_l:], pu), y_u, logging)
        total = self.w_dfl * dfl + ce + pair
        terms = torch.stack([total, dfl, ce, pair], 1)
        self._flag_nonfinite(step, terms[:, 1:])
        if logging:
            self._retire_bad()
            self._log_runs(step, terms, metrics)
        kept = self.alive
        if not kept:
            self.trainer.should_stop = True
            return None
        return total[kept].sum()

    def _pair_logits(self, e_l: Tensor, e_u: Tensor) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
        """All-pairs logits per head (R, b, b) on the labeled and unlabeled batch (as DFLModule)."""
        if e_l.shape == e_u.shape:
            both = self.net.pair_logits(torch.stack([e_l, e_u], dim=1))
            return {k: v[:, 0] for k, v in both.items()}, {k: v[:, 1] for k, v in both.items()}
        return self.net.pair_logits(e_l), self.net.pair_logits(e_u)

    def _pair_losses(self, pl: Mapping[str, Tensor], y_l: Tensor) -> Tensor:
        """Each live run's undersampled pair BCE (R,), its negatives drawn from its generator."""
        losses = [pl[self.predicates[0]].new_zeros(()) for _ in self.members]
        for r in self.alive:
            rng = self.members[r].generator()
            truths = {p: pair_truth(p, y_l[r]) for p in self.predicates}
            losses[r] = sum(undersampled_bce(pl[p][r], truths[p], rng) for p in self.predicates)
        return torch.stack(losses)

    def _dfl_losses(
        self, interp: Mapping[str, Tensor], y_u: Tensor, logging: bool
    ) -> tuple[Tensor, dict[int, Mapping[str, float] | None]]:
        """Each run's DFL loss (R,) on its interpretation, and on logging steps its metrics: one
        vmapped knowledge base when the runs share it and its operators, else run by run."""
        if self._vmap_kb and not logging:
            first = self.members[0]
            try:
                return vmap(lambda i: first.kb(i, first.ops).loss)(dict(interp)), {}
            except RuntimeError:  # an operator functorch cannot map (a custom autograd.Function)
                self._vmap_kb = False
        losses, metrics = [interp[DIGIT].new_zeros(()) for _ in self.members], {}
        for r in self.alive:
            member = self.members[r]
            labels = crisp_labels(y_u[r], self.predicates) if logging else None
            result = member.kb({k: v[r] for k, v in interp.items()}, member.ops, labels=labels)
            losses[r], metrics[r] = result.loss, result.metrics
        return torch.stack(losses), metrics

    def _flag_nonfinite(self, step: int, terms: Tensor) -> None:
        """Remember each run's first step and term (dfl, ce, pair) that is not finite."""
        bad = ~torch.isfinite(terms.detach())
        first = torch.stack(
            [torch.full_like(bad[:, 0], step, dtype=torch.long), bad.long().argmax(1)], 1
        )
        self._bad = torch.where(((self._bad[:, 0] < 0) & bad.any(1))[:, None], first, self._bad)

    def _retire_bad(self) -> None:
        """Retire every run flagged non-finite (one host sync): its summary frozen now, with the
        reason a single run's NonFiniteLossError gives, at the step a single run stops."""
        for r, (step, term) in enumerate(self._bad.tolist()):
            if step >= 0 and self.failures[r] is None:
                error = NonFiniteLossError(step, LOSS_TERMS[term])
                self.frozen[r] = self.summary(r)
                self.failures[r] = f"non-finite loss: {error}"

    def _log_runs(
        self,
        step: int,
        terms: Tensor,
        metrics: Mapping[int, Mapping[str, float] | None],
    ) -> None:
        """Each live run's losses and metrics for its own logger, with the step and keys
        Lightning gives a single run's `log_dict` (`step - 1`, plus `epoch`); written after the
        step's evaluation, as Lightning writes them."""
        values = terms.detach().tolist()
        for r in self.alive:
            member, logger = self.members[r], self.run_loggers[r]
            logged = dict(
                zip(("loss/total", "loss/dfl", "loss/ce", "loss/pair"), values[r], strict=True)
            )
            if metrics.get(r) is not None:
                logged.update({f"metrics/{k}": _as_logged(v) for k, v in metrics[r].items()})
                member.accumulate_tail(step, metrics[r])
            if logger is not None:
                self._pending.append((logger, {**logged, "epoch": self.current_epoch}, step - 1))

    def on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
        """Retired runs get no update from their (non-finite) gradients."""
        dead = [r for r, why in enumerate(self.failures) if why is not None]
        if not dead:
            return
        for param in self.net.parameters():
            if param.grad is not None:
                param.grad[dead] = 0.0

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        """Evaluate every `eval_every` steps and at the last step; then write the step's logs."""
        self.evaluate_if_due()
        for logger, logged, step in self._pending:
            logger.log_metrics(logged, step=step)
            logger.save()
        self._pending.clear()

    def evaluate_if_due(self) -> None:
        """This step's evaluation of every live run, once (LastCheckpoint calls it before saving),
        each run with `DFLModule.evaluate` on its own weights; a run flagged at the last step is
        retired first, as a single run raises there."""
        step = self.global_step
        if step == self.evaluated_step:
            return
        if step >= self.max_steps:
            self._retire_bad()
        if evaluation_step(step, self.max_steps, self.eval_every):
            batches = self.trainer.datamodule.test_batches(self.device)
            for r in self.alive:
                member = self.members[r]
                self.net.copy_to(r, member.net)
                results = member.evaluate(batches)
                if self.run_loggers[r] is not None:
                    self.run_loggers[r].log_metrics(
                        {f"test/{k}": v for k, v in results.items()}, step=step
                    )
                member.evaluated_step = step
        self.evaluated_step = step

    def summary(self, r: int) -> dict[str, Any]:
        """Run r's `DFLModule.summary()` (frozen where it was retired) at the stack's step."""
        if self.frozen[r] is not None:
            return dict(self.frozen[r])
        return {**self.members[r].summary(), "steps": self.global_step}

    def status(self, r: int) -> tuple[str, str | None]:
        """Run r's record status: failed with its reason, else ok only after the final evaluation
        at max_steps (as `train.final_status`)."""
        if self.failures[r] is not None:
            return "failed", self.failures[r]
        evaluated = self.members[r].evaluated_step
        if self.global_step != self.max_steps or evaluated != self.max_steps:
            return "failed", (
                f"no final evaluation: training ended at step {self.global_step}, last evaluated "
                f"at step {evaluated}, budget {self.max_steps}"
            )
        return "ok", None

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Every run's summary state and generator (as DFLModule saves them) and the failures."""
        runs = []
        for member in self.members:
            state: dict[str, Any] = {}
            member.on_save_checkpoint(state)
            runs.append(state["dfl_summary_state"])
        checkpoint["dfl_stack_state"] = {
            "runs": runs,
            "bad": self._bad.tolist(),
            "failures": list(self.failures),
            "frozen": list(self.frozen),
            "evaluated_step": self.evaluated_step,
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Restore what `on_save_checkpoint` saved."""
        state = checkpoint["dfl_stack_state"]
        for member, run in zip(self.members, state["runs"], strict=True):
            member.on_load_checkpoint({"dfl_summary_state": run})
        self._bad = torch.tensor(state["bad"], dtype=torch.long, device=self._bad.device)
        self.failures, self.frozen = list(state["failures"]), list(state["frozen"])
        self.evaluated_step = state["evaluated_step"]


def _as_logged(value: float) -> float:
    """A metric as Lightning's `log_dict` hands it to the loggers (a default-dtype tensor)."""
    return torch.tensor(float(value), dtype=torch.get_default_dtype()).item()
