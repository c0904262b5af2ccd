"""What a run prints: one progress bar over its steps, without Lightning's known noise.

The training stream repeats the unlabeled pool, so Lightning's epochs are passes over it and
its default bar restarts at every pass ("Epoch 0: 928", then "Epoch 1: 72" for 1,000 steps);
`StepProgressBar` counts the run's optimizer steps against `max_steps` instead. Outside a
terminal (a log file of nohup, SLURM or CI) a bar's carriage returns would make one line of
every update: `StepProgressLog` writes a line every few percent or minutes instead
(`progress(...)` picks the one for where the output goes).
"""

from __future__ import annotations

import logging
import sys
import time
import warnings
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import ProgressBar, TQDMProgressBar

# (message regex, category) of the warnings every run would print, all harmless here:
# the module's `transfer_batch_to_device` skips batches already on the device (it is meant to
# win over the DataModule's), Lightning 2.6 instantiates torch's deprecated `LeafSpec`, and on
# any host with SLURM installed (a cluster's login node) Lightning hints, with the whole command
# line, that `srun` is not used: a job is one process on one device, and the SLURM launcher
# (submitit) starts it under srun itself.
KNOWN_WARNINGS: tuple[tuple[str, type[Warning]], ...] = (
    (r"You have overridden `transfer_batch_to_device` in `LightningModule`", UserWarning),
    (r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning),
    (r"The `srun` command is available on your system but is not used", UserWarning),
)


# Lightning's informational lines (device availability, the litlogger advert, "`Trainer.fit`
# stopped: `max_steps` reached", "Seed set to") go through these loggers at INFO; a run prints
# its own summary instead, so they stay quiet (their warnings and errors still show).
LIBRARY_INFO = ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero")


def quiet_known_warnings() -> None:
    """Quiet Lightning's informational lines (LIBRARY_INFO) and ignore `KNOWN_WARNINGS`, unless
    the user chose warning filters (`python -W default`, `PYTHONWARNINGS`): then the warnings
    are shown as those filters say."""
    for name in LIBRARY_INFO:
        logging.getLogger(name).setLevel(logging.WARNING)
    if sys.warnoptions:
        return
    for message, category in KNOWN_WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=category)


def shown(trainer: L.Trainer, pl_module: L.LightningModule) -> dict[str, str]:
    """What progress shows beside the step: the first live run's last logged total loss and
    last test accuracy (the module's `shown`), where there are such."""
    numbers = getattr(pl_module, "shown", {})
    out = {}
    if numbers.get("loss") is not None:
        out["loss"] = f"{numbers['loss']:.3f}"
    if numbers.get("test_acc") is not None:
        out["test_acc"] = f"{numbers['test_acc']:.1%}"
    return out


class StepProgressBar(TQDMProgressBar):
    """One bar for the whole run: step / `max_steps` with the last logged loss and test accuracy
    (resumed runs start at their checkpoint's step), not one bar per pass over the data."""

    def on_train_start(self, trainer: L.Trainer, *_: Any) -> None:
        super().on_train_start()
        bar = self.train_progress_bar
        bar.reset(total=trainer.max_steps)
        bar.initial = bar.n = trainer.global_step
        bar.set_description("Training")

    def on_train_epoch_start(self, trainer: L.Trainer, *_: Any) -> None:
        """Keep the one bar across passes over the data."""

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *_: Any) -> None:
        bar = self.train_progress_bar
        if not bar.disable and self._should_update(trainer.global_step, bar.total):
            bar.n = trainer.global_step
            bar.set_postfix(self.get_metrics(trainer, pl_module))  # refreshes the bar

    def get_metrics(self, trainer: L.Trainer, pl_module: L.LightningModule) -> dict[str, Any]:
        """Lightning's bar metrics plus `loss/total` (as logged) and the module's last
        `schema.TEST_ACCURACY`, where there are such."""
        return {**super().get_metrics(trainer, pl_module), **shown(trainer, pl_module)}


class StepProgressLog(ProgressBar):
    """Progress for a log file: one line at every `percent` of the run's steps, or after
    `seconds` without one, and at its last step; each with the step, the rate and the time
    left, the loss and test accuracy (`shown`)."""

    def __init__(self, percent: float = 5.0, seconds: float = 300.0) -> None:
        super().__init__()
        self.percent, self.seconds, self._enabled = percent, seconds, True
        self._start = self._last = (0, 0.0)  # (step, monotonic time)

    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True

    def on_train_start(self, trainer: L.Trainer, *_: Any) -> None:
        self._start = self._last = (trainer.global_step, time.monotonic())

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *_: Any) -> None:
        step, total, now = trainer.global_step, trainer.max_steps, time.monotonic()
        every = max(1, round(total * self.percent / 100))
        due = step // every > self._last[0] // every or now - self._last[1] >= self.seconds
        if not self._enabled or not (due or step == total):
            return
        self._last = (step, now)
        rate = (step - self._start[0]) / max(now - self._start[1], 1e-9)
        minutes = (total - step) / rate / 60 if rate > 0 else None
        if minutes is None or step == total:
            left = ""
        else:
            left = f", about {minutes:.0f} min left" if minutes >= 1 else ", under a minute left"
        extra = "".join(f", {k} {v}" for k, v in shown(trainer, pl_module).items())
        print(
            f"[dfl_bench] step {step}/{total} ({step / total:.0%}), {rate:.1f} steps/s{left}"
            f"{extra}",
            flush=True,
        )


def progress() -> ProgressBar:
    """The run's progress: a bar on a terminal, lines in a log file (StepProgressLog)."""
    return StepProgressBar() if sys.stdout.isatty() else StepProgressLog()
