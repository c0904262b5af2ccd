"""The one LightningModule: R >= 1 runs of any task (`TaskRun`s, tasks/contract.py) trained as
one, a single run being R = 1.

Each run keeps its own initialisation (its TaskRun, built after its seed), data order (its stream
of the task's data, in lockstep), random draws (its `TaskRun.generator`), operators, logger and
summary; its loss is its `TaskRun.step_loss` (the one step definition). One optimizer over all
the runs' parameters is R optimizers, since ADAM and SGD update elementwise, and the stack's loss
is the sum of the runs' losses (each run's gradient is its own).

A step (`training_step`): every live run's loss on its batch, summed; backward; the update;
on logging steps (n % log_every == 0, n the n-th update) each run's loss terms and metrics to its
own logger. Evaluation every `eval_every` steps and at the last step (`evaluate_if_due`; the
checkpoint callback calls it before saving).

Non-finite losses, one rule: a run whose loss turns NaN/inf is retired at its first logging step
from then (or the last step); its summary is frozen there, its record fails with the reason
(`nonfinite_reason`), its loss leaves the sum and its gradients are zeroed; the other runs go on.
So is a run whose optimizer state turned NaN/inf (a finite gradient whose square overflows ADAM's
second moment: training/optimizer_state.py), with `nonfinite_state_reason`.

Two layouts of the networks:

* own networks (the default; CPU): each run's `step_loss` on its own network, one after another:
  a run's arithmetic is the run alone's, bit for bit;
* grouped (`grouped=True`, tasks whose runs are `GROUPED`; CUDA): the CNN as grouped
  convolutions and the heads vmapped (`StackNet`), one kernel per layer for all runs, then each
  run's `loss` from its slice. Grouped kernels round differently from a run alone's (measured on
  an H100: test accuracy within 0.003 after 200 steps, results/bench/cuda/session/; the record
  names its stack). The step is captured once as a CUDA graph (forward, backward, NaN flags) and
  replayed (`cuda_graph`); a logging step replays it too and adds each run's metrics from its
  outputs; evaluation and the optimizer update run eagerly. With `compile_dfl` each run's DFL
  term of those steps is compiled first (`torch.compile`): its fused kernels are what the graph
  replays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import lightning as L
import torch
from lightning.pytorch.loggers import Logger
from torch import Tensor, nn

from dfl_bench.tasks.contract import TaskRun, nonfinite_reason, nonfinite_state_reason, run_batch
from dfl_bench.training.optimizer_state import nonfinite_state, run_parameters

SHARED = ("TERMS", "optimizer", "log_every", "eval_every", "max_steps")
Batch = Mapping[str, Any]
Outputs = Any  # a grouped network's outputs for every run (what its task's runs read)


def evaluation_step(step: int, max_steps: int, eval_every: int) -> bool:
    """Whether the test set is evaluated after `step`: every `eval_every` steps (0: never) and at
    the last step."""
    return step >= max_steps or (eval_every > 0 and step % eval_every == 0)


def flag_nonfinite(bad: Tensor, step: int | Tensor, terms: Tensor) -> None:
    """Keep in `bad` (..., 2) the first step and term index whose loss term in `terms` (..., T) is
    not finite; in place and without a host sync (graph-capturable)."""
    nonfinite = ~torch.isfinite(terms.detach())
    first = torch.stack(
        [torch.zeros_like(nonfinite[..., 0], dtype=torch.long) + step, nonfinite.long().argmax(-1)],
        -1,
    )
    new = (bad[..., 0] < 0) & nonfinite.any(-1)
    bad.copy_(torch.where(new.unsqueeze(-1), first, bad))


def loss_keys(terms: Sequence[str]) -> tuple[str, ...]:
    """The logged names of a step's total and of its terms."""
    return ("loss/total", *(f"loss/{term}" for term in terms))


class RunsModule(L.LightningModule):
    """The runs `members` (TaskRuns of one task that agree on SHARED) as one LightningModule;
    `loggers`: each run's own (or None); `poison_at`: per run, the step before which its weights
    turn NaN (`debug.nan_at_step`; None: never); `grouped`: the StackNet layout (CUDA; GROUPED
    runs), else each run's own network; `cuda_graph`: replay steps as a CUDA graph (grouped
    layout only; off CUDA, tests: the same path without the capture); `compile_dfl`: compile
    each run's DFL term (its metrics stay eager); `keys`: the runs' names
    (`<experiment>/<config hash>` each), saved in the checkpoint (checkpoint.resumable)."""

    STATE = "runs_state"  # the checkpoint's key of the runs' state beyond their weights
    KEYS = "keys"  # the key, in STATE, of the names of the runs the checkpoint trained

    def __init__(
        self,
        members: Sequence[TaskRun],
        loggers: Sequence[Logger | None] | None = None,
        poison_at: Sequence[int | None] = (),
        grouped: bool = False,
        cuda_graph: bool = False,
        compile_dfl: bool = False,
        keys: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.automatic_optimization = False  # the step owns its update (a graph replays it)
        if not members:
            raise ValueError("a RunsModule needs at least one run")
        first = members[0]
        if len({type(m) for m in members}) != 1:
            kinds = sorted({type(m).__name__ for m in members})
            raise ValueError(f"runs of one module must be of one task, got {kinds}")
        for key in SHARED:
            values = [getattr(m, key) for m in members]
            if any(v != values[0] for v in values):
                raise ValueError(f"stacked runs must share {key}; got {values}")
        loggers = list(loggers) if loggers is not None else [None] * len(members)
        if len(loggers) != len(members):
            raise ValueError(f"need one logger per run: {len(loggers)} for {len(members)} runs")
        if grouped and not all(m.GROUPED for m in members):
            flags = [m.GROUPED for m in members]
            raise ValueError(f"grouped runs must all be GROUPED, got {flags}; use grouped=False")
        self.members = list(members)  # a plain list: their networks are registered below
        self.keys = list(keys)
        self.run_loggers = loggers
        self.poison_at = list(poison_at) or [None] * len(members)
        self.grouped, self.cuda_graph = grouped, cuda_graph and grouped
        if grouped:  # the members' nets: evaluation copies
            self.grouped_net = type(first).grouped_net(self.members, compile_dfl)
        else:
            self.run_nets = nn.ModuleList([m.net for m in members])  # trained in place
        self.loss_keys = loss_keys(first.TERMS)
        self.log_every, self.eval_every = first.log_every, first.eval_every
        self.max_steps = first.max_steps
        # per run: first bad step and term index, on the training device
        self.register_buffer(
            "_bad", torch.full((len(members), 2), -1, dtype=torch.long), persistent=False
        )
        self.register_buffer("_step", torch.zeros((), dtype=torch.long), persistent=False)
        self.failures: list[str | None] = [None] * len(members)
        self.frozen: list[dict[str, Any] | None] = [None] * len(members)
        self.evaluated_step = -1
        self.shown: dict[str, float] = {}  # the first live run's last loss and test accuracy
        self._pending: list[tuple[Logger, dict[str, float], int]] = []  # this step's run logs
        self._graph: _StepGraph | None = None
        self._optimizer: Any = None  # the optimizer of the last iteration (its state is checked)
        self._warm = False  # an eager step without metrics ran (what a capture needs first)

    @property
    def alive(self) -> list[int]:
        """The runs not retired."""
        return [r for r, why in enumerate(self.failures) if why is None]

    def configure_optimizers(self) -> torch.optim.Optimizer | dict[str, Any]:
        """The runs' optimizer (ADAM or SGD, Section 9.3) over all their parameters, with the
        schedule if any (one for all: they share the budget)."""
        return self.members[0].optimizer.configure(self.parameters(), self.max_steps or 1)

    def on_fit_start(self) -> None:
        """Take the Trainer's budget if the runs have none; move the runs (their generators,
        evaluation nets) to the training device."""
        if self.max_steps is None:
            if self.trainer.max_steps is None or self.trainer.max_steps < 1:
                raise ValueError("the runs need max_steps (or Trainer(max_steps=...))")
            self.max_steps = self.trainer.max_steps
        if not hasattr(self.trainer.datamodule, "test_batches"):
            raise ValueError("the runs evaluate on `datamodule.test_batches`: use the task's data")
        for member in self.members:
            member.max_steps = self.max_steps
            member.to(self.device)

    def transfer_batch_to_device(self, batch: Any, device: torch.device, idx: int) -> Any:
        """Skip the collection walk when the batch is already on `device` (the task's streams)."""
        if all(t.device == device for t in _leaves(batch)):
            return batch
        return super().transfer_batch_to_device(batch, device, idx)

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
        """Debug (`debug.nan_at_step` of a run): NaN weights for that run only."""
        for r, step in enumerate(self.poison_at):
            if step is not None and step == self.global_step:
                if self.grouped:
                    self.grouped_net.poison(r)
                else:
                    self.members[r].poison()

    def training_step(self, batch: Batch, idx: int) -> None:
        """One iteration of every live run (`iterate`) with Lightning's optimizer, then its
        schedule's step (the step owns its update, so Lightning steps no schedule itself)."""
        self.iterate(self.optimizers(), batch, self.global_step + 1)
        schedule = self.lr_schedulers()
        if schedule is not None:
            schedule.step()

    def iterate(self, optimizer: Any, batch: Batch, step: int) -> None:
        """Iteration `step` of every live run: the losses summed, backward, the optimizer's
        update (replayed as a CUDA graph where captured); per-run logs on logging steps."""
        logging = step % self.log_every == 0
        self._optimizer = optimizer
        if not self.alive:  # every run retired
            self._stop()
            return
        graph = self._graph_for(batch, step) if self.cuda_graph else None
        if graph is not None:
            optimizer.step(closure=lambda: self._replay(graph, batch, step, logging))
            if not self.alive:
                self._stop()
            return
        total, terms, metrics = self.step_loss(batch, step, logging)
        if logging:
            self._log_runs(step, terms, metrics)
        if total is None:  # every run retired at this step
            self._stop()
            return
        backward = self.manual_backward if self._trainer is not None else Tensor.backward

        def closure() -> Tensor:
            backward(total)
            return total

        optimizer.zero_grad(set_to_none=not self.grouped)
        optimizer.step(closure=closure)
        self._warm = self._warm or not logging

    def _stop(self) -> None:
        """End training (every run retired)."""
        if self._trainer is not None:
            self.trainer.should_stop = True

    def _replay(self, graph: _StepGraph, batch: Batch, step: int, logging: bool) -> Tensor:
        """The captured step on `batch`; on a logging step also each live run's metrics from the
        graph's outputs, flagged runs retired (their update zeroed) and the runs' logs."""
        total = graph.replay(batch, step)
        if logging:
            self._retire_bad(step - 1)
            metrics = {
                r: self.members[r].grouped_metrics(graph.outputs, r, graph.static)
                for r in self.alive
            }
            self._log_runs(step, graph.terms, metrics)
        return total

    def step_loss(
        self, batch: Batch, step: int | Tensor, logging: bool, outputs: Outputs | None = None
    ) -> tuple[Tensor | None, Tensor, dict[int, Mapping[str, float] | None]]:
        """The live runs' summed loss (None when none is left), every run's [total, *terms]
        (R, 1 + T) (zeros for a retired run) and each run's metrics on logging steps. Non-finite
        terms are flagged; on logging steps flagged runs retire before the sum. `outputs`: the
        grouped network's, if already computed."""
        kept = self.alive
        if self.grouped:
            outs = self._grouped_losses(batch, kept, logging, outputs)
        else:
            outs = {r: self.members[r].step_loss(run_batch(batch, r), logging) for r in kept}
        zero = outs[kept[0]][1].new_zeros(len(self.loss_keys))
        terms = torch.stack(
            [
                torch.cat([outs[r][0][None], outs[r][1]]) if r in outs else zero
                for r in range(len(self.members))
            ]
        )
        flag_nonfinite(self._bad, step, terms[:, 1:])
        if logging:
            self._retire_bad(int(step) - 1)
        live = [outs[r][0] for r in self.alive]
        return (sum(live) if live else None), terms, {r: outs[r][2] for r in kept}

    def grouped_outputs(self, batch: Batch) -> Outputs:
        """The grouped network's outputs for every run (the task's `grouped_outputs`)."""
        return type(self.members[0]).grouped_outputs(self.grouped_net, self.members, batch)

    def _grouped_losses(
        self, batch: Batch, kept: Sequence[int], logging: bool, outputs: Outputs | None = None
    ) -> dict[int, tuple[Tensor, Tensor, Mapping[str, float] | None]]:
        """Each live run's loss from the grouped network's outputs."""
        outputs = self.grouped_outputs(batch) if outputs is None else outputs
        return {r: self.members[r].grouped_loss(outputs, r, batch, logging) for r in kept}

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

    def _retire_bad(self, updates: int) -> None:
        """Retire every run flagged non-finite (one host sync), with the reason of
        `nonfinite_reason`, then every run whose optimizer state is not finite after `updates`
        updates (one more), with `nonfinite_state_reason`: its summary frozen now."""
        for r, (step, term) in enumerate(self._bad.tolist()):
            if step >= 0 and self.failures[r] is None:
                self.frozen[r] = self.summary(r)
                self.failures[r] = nonfinite_reason(step, self.members[r].TERMS[term])
        if self._optimizer is None or not self.alive:
            return
        params = run_parameters(self, len(self.members), self.grouped)
        for r, key in enumerate(nonfinite_state(self._optimizer, params, len(self.members))):
            if key is not None and self.failures[r] is None:
                self.frozen[r] = self.summary(r)
                self.failures[r] = nonfinite_state_reason(updates, key)

    def _log_runs(
        self,
        step: int,
        terms: Tensor,
        metrics: Mapping[int, Mapping[str, float] | None],
    ) -> None:
        """Each live run's losses and metrics for its own logger (at `step - 1` with `epoch`, the
        step and keys of Lightning's `log_dict`); written after the step's evaluation."""
        values = terms.detach().tolist()
        if self.alive:
            self.shown["loss"] = float(values[self.alive[0]][0])  # loss/total
        for r in self.alive:
            member, logger = self.members[r], self.run_loggers[r]
            logged = dict(zip(self.loss_keys, values[r], strict=True))
            if metrics.get(r) is not None:
                logged.update({f"metrics/{k}": _as_logged(v) for k, v in metrics[r].items()})
                member.accumulate(step, metrics[r])
            if logger is not None:
                self._pending.append((logger, {**logged, "epoch": self.current_epoch}, step - 1))

    def on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
        """Retired runs get no update from their (non-finite) gradients."""
        dead = [r for r, why in enumerate(self.failures) if why is not None]
        if not dead or not self.grouped:  # own networks: a retired run has no gradients
            return
        for param in self.grouped_net.parameters():
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
        """This step's evaluation (if it is an evaluation step), once: a checkpoint callback calls
        it before saving, so a checkpoint holds the state after its step's evaluation. At the
        last step a run flagged non-finite is retired first."""
        step = self.global_step
        if step == self.evaluated_step:
            return
        if step >= self.max_steps:
            self._retire_bad(step)
        if evaluation_step(step, self.max_steps, self.eval_every):
            self.evaluate_at(step)
            self.evaluated_step = step

    def evaluate_at(self, step: int) -> None:
        """Every live run's `evaluate` on its own weights, to its logger."""
        batches = self.trainer.datamodule.test_batches(self.device)
        for r in self.alive:
            member = self.members[r]
            if self.grouped:
                self.grouped_net.copy_to(r, member.net)
            results = member.evaluate(batches)
            if r == self.alive[0]:
                self.shown["test_acc"] = results.get("accuracy", results.get("sum_accuracy"))
            if self.run_loggers[r] is not None:
                self.run_loggers[r].log_metrics(
                    {f"test/{k}": v for k, v in results.items()}, step=step
                )
            member.evaluated_step = step

    def summary(self, r: int) -> dict[str, Any]:
        """Run r's `summary` (frozen where it was retired) at the module's step."""
        if self.frozen[r] is not None:
            return dict(self.frozen[r])
        optimizer = self.trainer.optimizers[0] if self._trainer is not None else None
        return {**self.members[r].summary(optimizer), "steps": self.global_step}

    def failure(self, r: int) -> str | None:
        """Why run r was retired (its non-finite reason), or None."""
        return self.failures[r]

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Every run's state beyond its weights (`TaskRun.state`), the failures and the runs'
        names (what checkpoint.resumable checks before resuming)."""
        checkpoint[self.STATE] = {
            self.KEYS: list(self.keys),
            "runs": [member.state() for member in self.members],
            "bad": self._bad.tolist(),
            "failures": list(self.failures),
            "frozen": list(self.frozen),
            "evaluated_step": self.evaluated_step,
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Restore what `on_save_checkpoint` saved."""
        state = checkpoint[self.STATE]
        for member, run in zip(self.members, state["runs"], strict=True):
            member.load_state(run)
        self._bad.copy_(torch.tensor(state["bad"], dtype=torch.long))
        self.failures, self.frozen = list(state["failures"]), list(state["frozen"])
        self.evaluated_step = state["evaluated_step"]
        self._graph = None


class _StepGraph:
    """A stack's step (forward, backward into the gradients, NaN flags; no metrics) captured
    as one CUDA graph over static copies of the batch; each run's generator is registered, so a
    replay draws what the eager step would draw (torch's graph-safe Philox offsets). Its outputs
    (`terms`, `outputs`) serve the logging steps' logs and metrics. Off CUDA (tests) a replay
    does the same work eagerly on the static copies."""

    def __init__(self, module: RunsModule, batch: Batch, kept: tuple[int, ...]) -> None:
        self.kept, self.module = kept, module
        self.static = _tree(batch, Tensor.clone)
        self.params = [p for p in module.parameters() if p.requires_grad]
        for p in self.params:  # gradients live outside the graph: zeroed and accumulated in it
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        self.graph: torch.cuda.CUDAGraph | None = None
        if not _leaves(self.static)[0].is_cuda:
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
        self.outputs = self.module.grouped_outputs(self.static)
        total, terms, _ = self.module.step_loss(
            self.static, self.module._step, logging=False, outputs=self.outputs
        )
        total.backward()
        self.total, self.terms = total.detach(), terms.detach()

    def replay(self, batch: Batch, step: int) -> Tensor:
        """Step `step` on `batch`: copy it in, replay; the gradients are then in `param.grad`."""
        for static, new in zip(_leaves(self.static), _leaves(batch), strict=True):
            static.copy_(new, non_blocking=True)
        self.module._step.fill_(step)
        if self.graph is None:
            self._step()
        else:
            self.graph.replay()
        return self.total


def _as_logged(value: float) -> float:
    """A metric as Lightning's `log_dict` hands it to the loggers (a default-dtype tensor)."""
    return torch.tensor(float(value), dtype=torch.get_default_dtype()).item()


def _tree(batch: Any, leaf: Any) -> Any:
    """`batch` (nested dicts, tuples and lists of tensors) with `leaf` applied to every tensor."""
    if isinstance(batch, Mapping):
        return {k: _tree(v, leaf) for k, v in batch.items()}
    if isinstance(batch, (tuple, list)):
        return type(batch)(_tree(v, leaf) for v in batch)
    return leaf(batch)


def _leaves(batch: Any) -> list[Tensor]:
    """The tensors of a (nested) batch."""
    if isinstance(batch, Mapping):
        return [t for v in batch.values() for t in _leaves(v)]
    if isinstance(batch, (tuple, list)):
        return [t for v in batch for t in _leaves(v)]
    return [batch]
