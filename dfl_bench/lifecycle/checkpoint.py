"""Resuming a job: `last.ckpt` taken after a step's evaluation, SIGTERM.

A resumed run gives the same numbers as an uninterrupted one (same thread count, device): the
checkpoint holds the weights, the optimizer, the loop position, the module's summary state, the
data stream's generator and position (`TrainStream.state_dict`) and the run's own generator
(`TaskRun.generator`: dropout, the undersampled negative pairs of Section 9.3). It names its
runs (`<experiment>/<config hash>` each, RunsModule.KEYS), and a job resumes only a checkpoint
of its own runs (`resumable`); one that names no runs (from a version before checkpoints named
their runs, or edited) cannot be checked, so it is set aside and its run trains afresh.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import lightning as L
import torch

from dfl_bench.lifecycle.private_api import set_received_sigterm
from dfl_bench.paths import set_aside
from dfl_bench.training import RunsModule
from dfl_bench.untrusted import UntrustedFile, read_json, unlinked, write_text

NAME = "last.ckpt"
MEMBERS = "members.json"  # the runs (`<experiment>/<config hash>`) a checkpoint folder holds


class CheckpointNotWritten(OSError):
    """A checkpoint could not be written (a full disk, say): the job records it as failed."""


def save(trainer: L.Trainer, path: Path) -> None:
    """`trainer.save_checkpoint(path)` atomically (a per-process temporary, then os.replace); a
    write that fails removes its partial temporary and raises CheckpointNotWritten naming the
    file (the last whole checkpoint, if any, stays)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        trainer.save_checkpoint(unlinked(tmp), weights_only=False)  # through no link
        os.replace(tmp, path)
    except (OSError, UntrustedFile) as err:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        why = getattr(err, "strerror", None) or err
        raise CheckpointNotWritten(f"checkpoint {path} cannot be written ({why})") from None


def loaded(path: Path) -> tuple[dict[str, Any], str | None]:
    """The checkpoint at `path` and None, or {} and why it cannot be resumed from (truncated,
    corrupt, a zip that is no Lightning checkpoint, a pickle that would call anything but torch's
    and plain containers' constructors: loaded with weights_only, nothing in a checkpoint runs
    code)."""
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
        if bad is not None:
            return {}, f"member {bad} fails its CRC check"
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # whatever torch.load raises on a zip of something else
        return {}, f"{type(err).__name__}: {_first_line(err)}"
    if not isinstance(state, dict) or not {"state_dict", "loops"} <= state.keys():
        return {}, "a zip, but no Lightning checkpoint (no state_dict and loops)"
    if RunsModule.STATE not in state:
        return {}, f"written before the one training module (no {RunsModule.STATE}): not resumable"
    if not isinstance(state[RunsModule.STATE], dict):
        return {}, f"its {RunsModule.STATE} is no mapping"
    return state, None


def _first_line(err: Exception) -> str:
    """An error's first line (torch's refusal of a pickle explains itself over a page)."""
    return (str(err).strip().splitlines() or [""])[0]


def write_members(folder: Path, keys: Sequence[str]) -> None:
    """Tie the checkpoint folder to its runs (`<experiment>/<config hash>` each), atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / MEMBERS, json.dumps(list(keys), indent=1))


def read_members(folder: Path) -> list[str] | None:
    """The runs a checkpoint folder belongs to; None when it says none (no file: a single run's
    folder from before the file existed, named by its config hash) or its file is unreadable."""
    path = folder / MEMBERS
    try:
        keys = read_json(path, expect=object)  # a file from others: bounded, no link followed
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        print(
            f"[dfl_bench] {path} is unreadable ({err}): its checkpoint is not used", file=sys.stderr
        )
        return []
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        print(f"[dfl_bench] {path} is no list of runs: its checkpoint is not used", file=sys.stderr)
        return []
    return keys


def other_runs(folder: Path, state: Mapping[str, Any], keys: list[str]) -> tuple[str, str] | None:
    """Why the checkpoint `state` in `folder` is not of exactly the runs `keys`, and the suffix it
    is set aside under: its folder's members.json or the run names it saved (RunsModule.KEYS)
    name other runs ("other"), it saved no names ("unnamed": nothing tells whose it is, its
    members.json being a file anyone may write), or those names are no list of strings
    ("corrupt"); None when both name `keys`."""
    members = read_members(folder)
    if members is not None and members != keys:
        return _trained_others(members, keys), "other"
    if RunsModule.KEYS not in state[RunsModule.STATE]:
        return UNNAMED, "unnamed"
    saved = state[RunsModule.STATE][RunsModule.KEYS]
    if not isinstance(saved, list) or not all(isinstance(key, str) for key in saved):
        return f"its {RunsModule.KEYS} are no list of run names ({type(saved).__name__})", "corrupt"
    return None if saved == keys else (_trained_others(saved, keys), "other")


UNNAMED = (  # the note on a checkpoint that saved no run names (other_runs)
    "it names no runs (written by a version before checkpoints named their runs, or edited), so "
    "it may be another run's"
)


def _trained_others(theirs: list[str], keys: list[str]) -> str:
    """The note on a checkpoint of the runs `theirs`, not `keys` (each shown up to SHOWN chars)."""
    return f"it trained other runs ({_shown(theirs)}, not {_shown(keys)})"


SHOWN = 300  # the characters of a list of runs a note shows (a checkpoint's own may be huge)


def _shown(keys: list[str]) -> str:
    """`keys` as Python writes it, cut to SHOWN characters."""
    text = repr(keys)
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}... ({len(keys)} runs)"


def resumable(folder: Path, keys: Sequence[str] | None = None) -> Path | None:
    """`folder/last.ckpt` if it is whole and, given `keys`, of exactly those runs (other_runs:
    its members.json and the names it saved); another one is moved aside (`last.ckpt.corrupt`,
    `.other`, `.unnamed`, numbered where one is: paths.set_aside) with a note, never used."""
    path = folder / NAME
    if not path.is_file():
        return None
    state, why = loaded(path)
    aside = "corrupt"
    if why is None and keys is not None:
        why, aside = other_runs(folder, state, list(keys)) or (None, aside)
    if why is None:
        return path
    kept = set_aside(path, aside)  # `last.ckpt.corrupt`, else `.corrupt.1`, ...: none replaced
    print(
        f"[dfl_bench] checkpoint {path}: {why}; kept as {kept.name}, starting afresh",
        file=sys.stderr,
    )
    return None


ASIDE = ("corrupt", "other", "unnamed")  # the suffixes of a checkpoint `resumable` set aside


def clean(folder: Path) -> list[Path]:
    """Remove a finished job's checkpoint folder but the checkpoints `resumable` set aside (it
    said they are kept: they stay for a look), which it returns."""
    kept = [p for p in folder.glob(f"{NAME}.*") if p.name.split(".")[2] in ASIDE]  # .corrupt.1
    if not kept:
        shutil.rmtree(folder, ignore_errors=True)
        return []
    for path in folder.iterdir():
        if path in kept:
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return kept


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
        self.earlier_s: list[float] = []  # wall seconds of the segments before a resume
        self.tic = time.perf_counter()

    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.tic = time.perf_counter()

    def state_dict(self) -> dict[str, list[float]]:
        """The wall seconds of every segment so far, this one's up to now (kept in last.ckpt)."""
        return {"wall_segments_s": [*self.earlier_s, round(time.perf_counter() - self.tic, 3)]}

    def load_state_dict(self, state_dict: dict[str, list[float]]) -> None:
        self.earlier_s = list(state_dict.get("wall_segments_s", []))

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
            set_received_sigterm(trainer, False)
