"""What a run prints: one progress bar over its steps, without Lightning's known noise.

The training stream repeats the unlabeled pool, so Lightning's epochs are passes over it and
its default bar restarts at every pass ("Epoch 0: 928", then "Epoch 1: 72" for 1,000 steps);
`StepProgressBar` counts the run's optimizer steps against `max_steps` instead.
"""

from __future__ import annotations

import logging
import sys
import warnings
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import TQDMProgressBar

from dfl_bench.schema import TEST_ACCURACY

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
        shown = dict(super().get_metrics(trainer, pl_module))
        loss = trainer.callback_metrics.get("loss/total")
        if loss is not None:
            shown["loss"] = f"{float(loss):.3f}"
        accuracy = getattr(pl_module, TEST_ACCURACY, None)
        if accuracy is not None:
            shown["test_acc"] = f"{accuracy:.1%}"
        return shown
