"""R runs of `DFLModule` trained as one LightningModule (R >= 1).

Each run keeps its own initialisation (its DFLModule, built after its seed), data order (its
TrainStream), dropout masks and negative pairs (drawn from its `DFLModule.generator()` in the
order `DFLModule.step_loss` draws them), operators and knowledge base, logger and summary; its
loss is its `DFLModule.loss` (the one step definition). One optimizer over all the runs'
parameters is R optimizers, since ADAM and SGD update elementwise, and the stack's loss is the
sum of the runs' Eq. "loss" (each run's gradient is its own).

Two layouts of the networks, by device:

* own networks (CPU): each run's `DFLModule.step_loss` on its own `DFLNet`, one after another:
  a run's arithmetic is the run alone's, bit for bit;
* one net (`StackNet`, CUDA): the CNN as grouped convolutions and the heads vmapped, one
  kernel per layer for all runs, then each run's `DFLModule.loss`. Grouped kernels round
  differently from a run alone's (measured on an H100: test accuracy within 0.003 after 200
  steps, results/bench/cuda/session/; the record names its stack).
  The step is captured once as a CUDA graph (forward, backward, NaN flags) and replayed
  (`cuda_graph`); a logging step replays it too and adds each run's metrics from its outputs;
  evaluation and the optimizer update run eagerly.
  With `compile_dfl` each run's DFL term of those steps is compiled first (`torch.compile`,
  `DFLModule.compile_dfl`): its fused kernels are what the graph replays.

A run whose loss turns NaN/inf is retired when a single run would have stopped (its first
logging step from then, or the last step): its summary is frozen there with the same reason,
its loss leaves the sum and its gradients are zeroed; the other runs go on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import lightning as L
import torch
from lightning.pytorch.loggers import Logger
from torch import Tensor, nn

from dfl_bench.run.dfl_module import (
    LOSS_KEYS,
    LOSS_TERMS,
    DFLModule,
    EvaluationSchedule,
    NonFiniteLossError,
    flag_nonfinite,
)
from dfl_bench.run.model import dropout_masks
from dfl_bench.run.optim import configure
from dfl_bench.stack.stack_net import StackNet

SHARED = ("predicates", "optimizer_cfg", "log_every", "eval_every", "max_steps")
Batch = Mapping[str, tuple[Tensor, Tensor]]
Outputs = tuple[Tensor, dict[str, Tensor], dict[str, Tensor]]  # logits, pairs labeled/unlabeled


def run_batch(batch: Batch, r: int) -> dict[str, tuple[Tensor, Tensor]]:
    """Run r's batch out of the stack's (R, n, ...) batch."""
    return {k: (x[r], y[r]) for k, (x, y) in batch.items()}


class StackModule(EvaluationSchedule, L.LightningModule):
    """The runs `members` (DFLModules that agree on SHARED and on having a DFL term) as one;
    `stack_net`: the StackNet layout (CUDA), else each run's own network (CPU);
    `cuda_graph`: replay steps as a CUDA graph (StackNet layout only; off CUDA, tests: the same
    path without the capture);
    `compile_dfl`: compile each run's DFL term (its metrics stay eager)."""

    def __init__(
        self,
        members: Sequence[DFLModule],
        loggers: Sequence[Logger | None],
        poison_at: Sequence[int | None] = (),
        stack_net: bool = False,
        cuda_graph: bool = False,
        compile_dfl: bool = False,
    ) -> None:
        super().__init__()
        self.automatic_optimization = False  # the step owns its update (a graph replays it)
        first = members[0]
        for key in SHARED:
            values = [getattr(m, key) for m in members]
            if any(v != values[0] for v in values):
                raise ValueError(f"stacked runs must share {key}; got {values}")
        if len({m.kb is None for m in members}) != 1:
            raise ValueError("stacked runs must all have a DFL term (w_dfl > 0) or all none")
        if len(loggers) != len(members):
            raise ValueError(f"need one logger per run: {len(loggers)} for {len(members)} runs")
        self.members = list(members)  # a plain list: their Lightning state is not ours
        self.run_loggers = list(loggers)
        self.poison_at = list(poison_at) or [None] * len(members)
        self.stack_net, self.cuda_graph = stack_net, cuda_graph and stack_net
        if compile_dfl and first.kb is not None:
            for member in members:
                member.compile_dfl(runs=len(members))
        if stack_net:
            self.net = StackNet([m.net for m in members])  # members' nets: evaluation copies
        else:
            self.nets = nn.ModuleList([m.net for m in members])  # trained in place
        self.predicates, self.unlabeled = first.predicates, first.kb is not None
        self.log_every, self.eval_every = first.log_every, first.eval_every
        self.max_steps = first.max_steps
        # per run: first bad step and term index (as DFLModule._bad), on the training device
        self.register_buffer(
            "_bad", torch.full((len(members), 2), -1, dtype=torch.long), persistent=False
        )
        self.register_buffer("_step", torch.zeros((), dtype=torch.long), persistent=False)
        self.failures: list[str | None] = [None] * len(members)
        self.frozen: list[dict[str, Any] | None] = [None] * len(members)
        self.evaluated_step = -1
        self._pending: list[tuple[Logger, dict[str, float], int]] = []  # this step's run logs
        self._graph: _StepGraph | None = None
        self._warm = False  # an eager step without metrics ran (what a capture needs first)

    @property
    def alive(self) -> list[int]:
        """The runs not retired."""
        return [r for r, why in enumerate(self.failures) if why is None]

    def configure_optimizers(self) -> torch.optim.Optimizer | dict[str, Any]:
        """The runs' optimizer (ADAM or SGD, Section 9.3) over all their parameters, with the
        schedule if any (one for all: they share the budget)."""
        return configure(self.parameters(), self.members[0].optimizer_cfg, self.max_steps or 1)

    def on_fit_start(self) -> None:
        """Move the runs' modules (their generators, evaluation nets) to the training device."""
        if self.max_steps is None:
            raise ValueError("stacked runs need max_steps")
        if not hasattr(self.trainer.datamodule, "test_batches"):
            raise ValueError("StackModule evaluates on `datamodule.test_batches`")
        for member in self.members:
            member.to(self.device)

    def transfer_batch_to_device(self, batch: Any, device: torch.device, idx: int) -> Any:
        """Skip the collection walk when the stack's batch is already on `device`."""
        if all(t.device == device for pair in batch.values() for t in pair):
            return batch
        return super().transfer_batch_to_device(batch, device, idx)

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
        """Debug (`debug.nan_at_step` of a run): NaN weights for that run only, as alone."""
        for r, step in enumerate(self.poison_at):
            if step is not None and step == self.global_step:
                with torch.no_grad():
                    if self.stack_net:
                        self.net.poison(r)
                    else:
                        next(self.nets[r].parameters()).fill_(float("nan"))

    def training_step(self, batch: Batch, idx: int) -> None:
        """One iteration of every live run (`iterate`) with Lightning's optimizer."""
        self.iterate(self.optimizers(), batch, self.global_step + 1)

    def iterate(self, optimizer: Any, batch: Batch, step: int) -> None:
        """Iteration `step` of every live run: Eq. "loss" summed, backward, the optimizer's
        update (replayed as a CUDA graph where captured); per-run logs on logging steps."""
        logging = step % self.log_every == 0
        if not self.alive:  # every run retired
            self.trainer.should_stop = True
            return
        graph = self._graph_for(batch, step) if self.cuda_graph else None
        if graph is not None:
            optimizer.step(closure=lambda: self._replay(graph, batch, step, logging))
            if not self.alive:
                self.trainer.should_stop = True
            return
        total, terms, metrics = self.step_loss(batch, step, logging)
        if logging:
            self._log_runs(step, terms, metrics)
        if total is None:  # every run retired at this step
            self.trainer.should_stop = True
            return
        backward = self.manual_backward if self._trainer is not None else Tensor.backward

        def closure() -> Tensor:
            backward(total)
            return total

        optimizer.zero_grad(set_to_none=not self.stack_net)
        optimizer.step(closure=closure)
        self._warm = self._warm or not logging

    def _replay(self, graph: _StepGraph, batch: Batch, step: int, logging: bool) -> Tensor:
        """The captured step on `batch`; on a logging step also each live run's metrics from the
        graph's outputs, flagged runs retired (their update zeroed) and the runs' logs."""
        total = graph.replay(batch, step)
        if logging:
            self._retire_bad()
            logits, pair_u, y_u = graph.unlabeled()
            metrics = {
                r: self.members[r].metrics(logits[r], {k: v[r] for k, v in pair_u.items()}, y_u[r])
                for r in self.alive
            }
            self._log_runs(step, graph.terms, metrics)
        return total

    def step_loss(
        self, batch: Batch, step: int | Tensor, logging: bool, outputs: Outputs | None = None
    ) -> tuple[Tensor | None, Tensor, dict[int, Mapping[str, float] | None]]:
        """The live runs' summed loss (None when none is left), every run's [total, dfl, ce,
        pair] (R, 4) (zeros for a retired run) and each run's metrics on logging steps. Non-finite
        terms are flagged; on logging steps flagged runs retire before the sum, as a single run
        raises there before its update. `outputs`: the stacked network's, if already computed."""
        kept = self.alive
        if self.stack_net:
            outs = self._stack_losses(batch, kept, logging, outputs)
        else:
            outs = {r: self.members[r].step_loss(run_batch(batch, r), logging) for r in kept}
        zero = outs[kept[0]][1].new_zeros(4)
        terms = torch.stack(
            [
                torch.cat([outs[r][0][None], outs[r][1]]) if r in outs else zero
                for r in range(len(self.members))
            ]
        )
        flag_nonfinite(self._bad, step, terms[:, 1:])
        if logging:
            self._retire_bad()
        live = [outs[r][0] for r in self.alive]
        return (sum(live) if live else None), terms, {r: outs[r][2] for r in kept}

    def stack_outputs(self, batch: Batch) -> Outputs:
        """The stacked network's outputs for every run: digit logits (R, n_l + n_u, 10) and each
        head's all-pairs logits on the labeled and on the unlabeled images (R, b, b)."""
        (x_l, _), (x_u, _) = batch["labeled"], batch["unlabeled"]
        x = torch.cat([x_l, x_u], dim=1) if self.unlabeled else x_l
        drawn = [dropout_masks(x.shape[1], x.device, m.generator()) for m in self.members]
        logits, emb = self.net(x, tuple(torch.stack(m) for m in zip(*drawn, strict=True)))
        n_l = x_l.shape[1]
        pl, pu = {}, {}
        if self.predicates:
            e_l, e_u = emb[:, :n_l], emb[:, n_l:]
            if e_l.shape == e_u.shape:
                both = self.net.pair_logits(torch.stack([e_l, e_u], dim=1))
                pl, pu = (
                    {k: v[:, 0] for k, v in both.items()},
                    {k: v[:, 1] for k, v in both.items()},
                )
            else:
                pl, pu = self.net.pair_logits(e_l), self.net.pair_logits(e_u)
        return logits, pl, pu

    def _stack_losses(
        self, batch: Batch, kept: Sequence[int], logging: bool, outputs: Outputs | None = None
    ) -> dict[int, tuple[Tensor, Tensor, Mapping[str, float] | None]]:
        """Each live run's `DFLModule.loss` from the stacked network's outputs."""
        logits, pl, pu = outputs or self.stack_outputs(batch)
        y_l, y_u = batch["labeled"][1], batch["unlabeled"][1]
        out = {}
        for r in kept:
            member = self.members[r]
            out[r] = member.loss(
                logits[r],
                {k: v[r] for k, v in pl.items()},
                {k: v[r] for k, v in pu.items()},
                y_l[r],
                y_u[r],
                member.generator(),
                logging,
            )
        return out

    def _graph_for(self, batch: Batch, step: int) -> _StepGraph | None:
        """The captured step for the live runs (captured once an eager step without metrics
        warmed up the kernels and compiled the DFL terms; captured again when a run retires)."""
        kept = tuple(self.alive)
        if self._graph is not None and self._graph.kept == kept:
            return self._graph
        if not self._warm:
            return None
        self._graph = _StepGraph(self, batch, kept)
        return self._graph

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
            logged = dict(zip(LOSS_KEYS, values[r], strict=True))
            if metrics.get(r) is not None:
                logged.update({f"metrics/{k}": _as_logged(v) for k, v in metrics[r].items()})
                member.accumulate_tail(step, metrics[r])
            if logger is not None:
                self._pending.append((logger, {**logged, "epoch": self.current_epoch}, step - 1))

    def on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
        """Retired runs get no update from their (non-finite) gradients."""
        dead = [r for r, why in enumerate(self.failures) if why is not None]
        if not dead or not self.stack_net:  # own networks: a retired run has no gradients
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

    def at_last_step(self) -> None:
        """A run flagged at the last step is retired, as a single run raises there."""
        self._retire_bad()

    def evaluate_at(self, step: int) -> None:
        """Every live run's evaluation (LastCheckpoint calls it before saving), each with
        `DFLModule.evaluate` on its own weights."""
        batches = self.trainer.datamodule.test_batches(self.device)
        for r in self.alive:
            member = self.members[r]
            if self.stack_net:
                self.net.copy_to(r, member.net)
            results = member.evaluate(batches)
            if self.run_loggers[r] is not None:
                self.run_loggers[r].log_metrics(
                    {f"test/{k}": v for k, v in results.items()}, step=step
                )
            member.evaluated_step = step

    def summary(self, r: int) -> dict[str, Any]:
        """Run r's `DFLModule.summary()` (frozen where it was retired) at the stack's step."""
        if self.frozen[r] is not None:
            return dict(self.frozen[r])
        return {**self.members[r].summary(), "steps": self.global_step}

    def failure(self, r: int) -> str | None:
        """Why run r was retired (its NaN reason), or None."""
        return self.failures[r]

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
        self._bad.copy_(torch.tensor(state["bad"], dtype=torch.long))
        self.failures, self.frozen = list(state["failures"]), list(state["frozen"])
        self.evaluated_step = state["evaluated_step"]
        self._graph = None


class _StepGraph:
    """A stack's step (forward, backward into the gradients, NaN flags; no metrics) captured
    as one CUDA graph over static copies of the batch; each run's generator is registered, so a
    replay draws what the eager step would draw (torch's graph-safe Philox offsets). Its outputs
    (`terms`, `unlabeled`) serve the logging steps' logs and metrics. Off CUDA (tests) a replay
    does the same work eagerly on the static copies."""

    def __init__(self, module: StackModule, batch: Batch, kept: tuple[int, ...]) -> None:
        self.kept, self.module = kept, module
        self.static = {k: (x.clone(), y.clone()) for k, (x, y) in batch.items()}
        self.params = [p for p in module.parameters() if p.requires_grad]
        for p in self.params:  # gradients live outside the graph: zeroed and accumulated in it
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        self.graph: torch.cuda.CUDAGraph | None = None
        if not self.static["labeled"][0].is_cuda:
            return
        self.graph = torch.cuda.CUDAGraph()
        for member in module.members:
            self.graph.register_generator_state(member.generator())
        torch.cuda.synchronize()
        with torch.cuda.graph(self.graph):
            self._step()

    def _step(self) -> None:
        """What the graph holds: gradients zeroed, every kept run's forward and backward."""
        for p in self.params:
            p.grad.zero_()
        self.outputs = self.module.stack_outputs(self.static)
        total, terms, _ = self.module.step_loss(
            self.static, self.module._step, logging=False, outputs=self.outputs
        )
        total.backward()
        self.total, self.terms = total.detach(), terms.detach()

    def replay(self, batch: Batch, step: int) -> Tensor:
        """Step `step` on `batch`: copy it in, replay; the gradients are then in `param.grad`."""
        for k, (x, y) in batch.items():
            self.static[k][0].copy_(x, non_blocking=True)
            self.static[k][1].copy_(y, non_blocking=True)
        self.module._step.fill_(step)
        if self.graph is None:
            self._step()
        else:
            self.graph.replay()
        return self.total

    def unlabeled(self) -> tuple[Tensor, dict[str, Tensor], Tensor]:
        """The last replay's unlabeled digit logits (R, n_u, 10), pair logits per head and
        labels (detached)."""
        logits, _, pair_u = self.outputs
        n_l = self.static["labeled"][0].shape[1]
        pairs = {k: v.detach() for k, v in pair_u.items()}
        return logits[:, n_l:].detach(), pairs, self.static["unlabeled"][1]


def _as_logged(value: float) -> float:
    """A metric as Lightning's `log_dict` hands it to the loggers (a default-dtype tensor)."""
    return torch.tensor(float(value), dtype=torch.get_default_dtype()).item()
