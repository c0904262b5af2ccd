"""Resuming a job: `last.ckpt` taken after a step's evaluation, SIGTERM.

A resumed run gives the same numbers as an uninterrupted one (same thread count, device): the
checkpoint holds the weights, the optimizer, the loop position, the module's summary state, the
data stream's generator and position (`TrainStream.state_dict`) and the run's own generator
(`DFLModule.generator`: dropout, the undersampled negative pairs of Section 9.3).
"""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import lightning as L

NAME = "last.ckpt"


def save(trainer: L.Trainer, path: Path) -> None:
    """`trainer.save_checkpoint(path)` atomically (a per-process temporary, then os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    trainer.save_checkpoint(tmp, weights_only=False)
    os.replace(tmp, path)


def problem(path: Path) -> str | None:
    """Why the checkpoint at `path` cannot be resumed from (truncated, corrupt), or None."""
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (OSError, EOFError, zipfile.BadZipFile) as err:
        return f"{type(err).__name__}: {err}"
    return None if bad is None else f"member {bad} fails its CRC check"


def resumable(folder: Path) -> Path | None:
    """`folder/last.ckpt` if it is whole; a corrupt one is reported, removed and not used."""
    path = folder / NAME
    if not path.is_file():
        return None
    why = problem(path)
    if why is None:
        return path
    print(f"[dfl_bench] checkpoint {path} is corrupt ({why}); starting afresh", file=sys.stderr)
    path.unlink(missing_ok=True)
    return None


def requeued_by_submitit() -> bool:
    """Whether this process is a submitit SLURM job: submitit ignores SIGTERM and requeues the job
    on its own signal (USR2), after which the job resumes from `last.ckpt`."""
    return os.environ.get("SUBMITIT_EXECUTOR") == "slurm"


class LastCheckpoint(L.Callback):
    """Save `last.ckpt` every `every` steps and when SIGTERM arrives, after the step's
    evaluation; never at the last step (the run record follows it directly), so a job that dies
    before its record reruns its final evaluation."""

    NAME = NAME

    def __init__(self, folder: Path, every: int) -> None:
        self.path, self.every = folder / NAME, every

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args) -> None:
        step = trainer.global_step
        if trainer.max_steps is not None and 0 <= trainer.max_steps <= step:
            return
        terminating = trainer.received_sigterm
        if not terminating and not (self.every > 0 and step % self.every == 0):
            return
        evaluate = getattr(pl_module, "evaluate_if_due", None)
        if evaluate is not None:
            evaluate()
        save(trainer, self.path)
        if terminating and requeued_by_submitit():
            # submitit bypasses SIGTERM and requeues on its own signal: keep training until then
            trainer._signal_connector.received_sigterm = False
