"""The task contract: a task is one class (`Task`) and one yaml (conf/task/<name>.yaml, or a
`task/` group on Hydra's search path) whose `_target_` names the class; nothing else registers
it (dfl_bench/tasks/__init__.py finds it through the composed config). The class gives

    NAME                      its name (the yaml's `name`, the records' `task.name`)
    IGNORES, SETTINGS, ...    what it declares about its config (`Task`'s attributes)
    check(config)             its own settings checked before any data is loaded
    build(config, operators)  -> a TaskRun: one run of a resolved job config
    data(configs)             -> a LightningDataModule for the runs of `configs` (they differ in
                                 their seeds only): `train_dataloader()` yields each step's
                                 batches of every run stacked on a leading run dimension (run r's
                                 what it sees alone; `Lockstep` stacks R streams),
                                 `test_batches(device)` the test set (the same for every run),
                                 `checksum` of the data it loaded (None before setup: `arrays`)

and the one training module (`dfl_bench.training.RunsModule`) trains R >= 1 of its runs as one
LightningModule. Everything else a run is (its loss terms, metrics, evaluation, record fields,
resumable state, a grouped layout for a GPU) is its TaskRun's.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor, nn

from dfl_bench.schema import NONFINITE
from dfl_bench.tasks.optim import OptimizerSpec, spec
from dfl_bench.tasks.values import Settings

TRAINING_STREAM = 1  # run_seed stream of the dropout masks and a task's own random draws
# What the lifecycle reads of a task's data module (module doc); a module without one is refused
# before training, not after it (`check_data_module`).
DATA_ATTRIBUTES = ("train_dataloader", "test_batches", "checksum", "arrays")


def check_data_module(data: Any, task: str) -> None:
    """A ValueError naming the DATA_ATTRIBUTES `data` does not declare (read without calling
    anything: a property is not evaluated)."""
    absent = object()
    missing = [a for a in DATA_ATTRIBUTES if inspect.getattr_static(data, a, absent) is absent]
    if missing:
        raise ValueError(
            f"task {task!r}: its data module {type(data).__name__} lacks {missing}; a task's "
            f"data(configs) gives {list(DATA_ATTRIBUTES)} (docs/tasks.md)"
        )


def run_seed(seed: int, stream: int) -> int:
    """A 63-bit seed for one random stream of a run (numpy's SeedSequence of (seed, stream)), so
    that a run's streams are independent of each other and of the data stream's `seed`."""
    return int(np.random.SeedSequence([seed, stream]).generate_state(1, np.uint64)[0] >> 1)


def nonfinite_reason(step: int, term: str) -> str:
    """The failed record's reason when loss term `term` is NaN or infinite at (1-based) `step`."""
    return f"{NONFINITE}loss: loss term '{term}' is not finite at step {step}"


def nonfinite_state_reason(step: int, key: str) -> str:
    """The failed record's reason when the optimizer's state `key` (`exp_avg_sq`, ...) holds a
    NaN or inf after `step` updates (training/optimizer_state.py): its updates are zero or NaN."""
    return (
        f"{NONFINITE}optimizer state: '{key}' is not finite after step {step} (the gradient "
        "overflowed it in float32, so the update is zero or NaN); try a smaller kb.w_dfl or "
        "optimizer.lr"
    )


class TaskRun(nn.Module):
    """One run of a task: its network (`net`), its own random stream (`generator`) and

    * `step_loss(batch, logging)` -> (total, terms, metrics): the step's loss on the run's batch,
      its terms (one per `TERMS`, logged as `loss/<term>`) and, on logging steps, the metrics
      (logged as `metrics/<name>`; None when it has none);
    * `accumulate(step, metrics)`: a logging step's metrics into the summary (default: nothing);
    * `evaluate(batches)` -> test metrics (logged as `test/<name>`), kept for the summary;
    * `summary(optimizer)` -> the record's results: `schema.TEST_ACCURACY` (the task's headline,
      at the last evaluation) and `schema.BEST_TEST_ACCURACY` at least;
    * `state()` / `load_state(state)`: what a checkpoint keeps beyond the weights.

    `GROUPED`: the runs can also be computed in one grouped network for a stack (CUDA): the
    class gives `grouped_net(members, compile_dfl)` and `grouped_outputs(net, members, batch)`,
    each run its `grouped_loss(outputs, r, batch, logging)` and `grouped_metrics(...)` from them.
    """

    TERMS: tuple[str, ...] = ()
    GROUPED = False
    net: nn.Module

    def __init__(
        self,
        seed: int,
        optimizer: Mapping[str, Any] | None,
        log_every: int,
        eval_every: int,
        max_steps: int | None,
    ) -> None:
        super().__init__()
        self.seed, self.log_every, self.eval_every, self.max_steps = (
            seed,
            log_every,
            eval_every,
            max_steps,
        )
        self.optimizer: OptimizerSpec = spec(optimizer or {"name": "adam"}, max_steps)
        self.evaluated_step = -1  # the step of the last test evaluation
        self._generator: torch.Generator | None = None
        self._generator_state: Tensor | None = None  # from a checkpoint, set on first use

    @property
    def device(self) -> torch.device:
        """Where the run's network lives."""
        return next(self.net.parameters()).device

    def generator(self) -> torch.Generator:
        """The run's own RNG (dropout, a task's random draws; seeded by `run_seed(seed, 1)`, kept
        in checkpoints): a run's draws do not depend on what else the process runs."""
        device = self.device
        if self._generator is None or self._generator.device != device:
            self._generator = torch.Generator(device)
            self._generator.manual_seed(run_seed(self.seed, TRAINING_STREAM))
            if self._generator_state is not None:
                self._generator.set_state(self._generator_state)
                self._generator_state = None
        return self._generator

    def step_loss(
        self, batch: Mapping[str, Any], logging: bool
    ) -> tuple[Tensor, Tensor, Mapping[str, float] | None]:
        raise NotImplementedError

    def accumulate(self, step: int, metrics: Mapping[str, float]) -> None:
        """Add a logging step's metrics to the summary (nothing unless the task keeps some)."""

    def evaluate(self, batches: list[tuple[Tensor, ...]]) -> dict[str, float]:
        raise NotImplementedError

    def summary(self, optimizer: torch.optim.Optimizer | None) -> dict[str, Any]:
        raise NotImplementedError

    def state(self) -> dict[str, Any]:
        """The resumable state beyond the weights (a subclass adds its own)."""
        return {"evaluated_step": self.evaluated_step, "generator": self.generator().get_state()}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Restore what `state` returned."""
        self.evaluated_step = state.get("evaluated_step", -1)
        self._generator, self._generator_state = None, state.get("generator")

    @classmethod
    def grouped_net(cls, members: Sequence[TaskRun], compile_dfl: bool) -> nn.Module:
        """One network computing every run of `members` at once (GROUPED tasks)."""
        raise ValueError(f"{cls.__name__} has no grouped layout; use grouped=False")

    @classmethod
    def grouped_outputs(cls, net: nn.Module, members: Sequence[TaskRun], batch: Any) -> Any:
        """The grouped network's outputs for every run on the stacked `batch`."""
        raise NotImplementedError

    def grouped_loss(
        self, outputs: Any, r: int, batch: Any, logging: bool
    ) -> tuple[Tensor, Tensor, Mapping[str, float] | None]:
        """What `step_loss` gives, for run `r` of a stack, from the grouped outputs."""
        raise NotImplementedError

    def grouped_metrics(self, outputs: Any, r: int, batch: Any) -> Mapping[str, float] | None:
        """A logging step's metrics of run `r` from the grouped outputs (detached)."""
        raise NotImplementedError

    def poison(self) -> None:
        """Debug (`debug.nan_at_step`): NaN into the network's first weight, so the next loss is
        NaN."""
        with torch.no_grad():
            next(self.net.parameters()).fill_(float("nan"))


def stacked(items: Iterable[Any]) -> Any:
    """The runs' batches (dicts of tensors or of tuples of tensors) as one, stacked on a leading
    run dimension (one run: a view, no copy)."""
    first, *rest = items = list(items)
    if isinstance(first, Mapping):
        return {k: stacked(item[k] for item in items) for k in first}
    if isinstance(first, tuple):
        return tuple(stacked(parts) for parts in zip(*items, strict=True))
    return first.unsqueeze(0) if not rest else torch.stack(items)


def run_batch(batch: Any, r: int) -> Any:
    """Run r's batch out of a stacked batch."""
    if isinstance(batch, Mapping):
        return {k: run_batch(v, r) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(run_batch(v, r) for v in batch)
    return batch[r]


class Lockstep:
    """R resumable streams advanced together: each item is one step's batches of every run,
    stacked (`stacked`); `state_dict` holds every stream's (Lightning saves it in the checkpoint).
    The streams must have equal passes, so their epochs coincide."""

    def __init__(self, streams: Iterable[Any]) -> None:
        self.streams = list(streams)
        lengths = {len(s) for s in self.streams}
        if len(lengths) != 1:
            raise ValueError(f"stacked streams must have equal passes, got lengths {lengths}")

    def __len__(self) -> int:
        return len(self.streams[0])

    def __iter__(self) -> Iterator[Any]:
        for step in zip(*self.streams, strict=True):
            yield stacked(step)

    def state_dict(self) -> dict[str, Any]:
        """Every run's stream state."""
        return {"runs": [s.state_dict() for s in self.streams]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue every run's stream where `state_dict` was taken."""
        for stream, run in zip(self.streams, state["runs"], strict=True):
            stream.load_state_dict(run)


class Task:
    """A task (module doc): its name and what it declares about its config, its settings'
    check, its runs and their data. A subclass sets NAME and overrides `build` and `data`; the
    class attributes are read without building anything."""

    NAME: ClassVar[str]
    IGNORES: ClassVar[tuple[str, ...]] = ()  # config groups it does not read (overrides refused)
    SETTINGS: ClassVar[Mapping[str, tuple[int, int]]] = {}  # `task.<key>`: an integer in a range
    CHOICES: ClassVar[Mapping[str, tuple[str, ...]]] = {}  # `task.<key>`: one of named values
    FRACTIONS: ClassVar[tuple[str, ...]] = ()  # `task.<key>`: a fraction in [0, 1)
    NUMBERS: ClassVar[Mapping[str, tuple[float, float]]] = {}  # `task.<key>`: a number in a range
    MEASURES: ClassVar[tuple[tuple[str, str], ...]] = ()  # (label, record field): summary line

    @classmethod
    def setting_types(cls) -> dict[str, type]:
        """The settings it declares (`task.<key>`) and the type of each value."""
        return {
            **{key: int for key in cls.SETTINGS},
            **{key: str for key in cls.CHOICES},
            **{key: float for key in (*cls.FRACTIONS, *cls.NUMBERS)},
        }

    def check(self, config: Mapping[str, Any]) -> None:
        """Only its declared settings, each in its range (`values.Settings`: a ValueError naming
        the valid ones); a subclass adds the checks of the other groups it reads."""
        declared = Settings(self.SETTINGS, self.CHOICES, self.FRACTIONS, self.NUMBERS)
        declared.check(self.NAME, config.get("task") or {})

    def stack_key(self, config: Mapping[str, Any]) -> Any:
        """What its runs of one stack must share beyond the settings every stack shares (JSON)."""
        return None

    def build(self, config: Mapping[str, Any], operators: Any) -> TaskRun:
        """One run of a resolved job config with its operators (an `OperatorSet`)."""
        raise NotImplementedError

    def data(self, configs: Sequence[Mapping[str, Any]]) -> Any:
        """The LightningDataModule of the runs of `configs` (module doc)."""
        raise NotImplementedError
