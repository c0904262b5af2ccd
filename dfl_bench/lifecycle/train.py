"""The Hydra entry point: one job of the semi-supervised MNIST experiment of Section 9.3.

    python -m dfl_bench                                  # recommended operators, quick profile
    python -m dfl_bench tnorm=product implication=reichenbach
    python -m dfl_bench +experiment=same_symmetric -m    # one paper table, one job per row

Each job (Hydra task function `main`):
  1. resolves and checks the config (guards.py: values, ignored overrides, writable folders; an
     experiment's `row` picks that table row's operators) and builds the operators, its run and
     its data module (not loaded), so a bad configuration fails here, before any data is loaded
     (a sweep checks all jobs first: sweep.py);
  2. then lives the lifecycle of job.py with the objects built in 1: lock, skip or reuse, train
     (resuming from
     `<checkpoint_dir>/<experiment>/<hash>/last.ckpt`), record, print its summary.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import hydra
import lightning as L
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from hydra.utils import to_absolute_path
from omegaconf import DictConfig, OmegaConf

from dfl_bench import tasks
from dfl_bench.exits import EXIT_FAILED, EXIT_INVALID  # noqa: E402  (0: every job ok or skipped)
from dfl_bench.lifecycle import guards, loggers, records
from dfl_bench.lifecycle.declared import check_declared
from dfl_bench.lifecycle.job import (
    Built,
    Job,
    fit_runs,
    job_name,
    job_paths,
    lock_paths,
    settled_record,
)
from dfl_bench.lifecycle.lock import AlreadyRunning, job_lock
from dfl_bench.lifecycle.preflight import escaped
from dfl_bench.lifecycle.resolve import resolved_config
from dfl_bench.lifecycle.trainer import check_device, effective_flags
from dfl_bench.operators import KINDS, OperatorSet
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.schema import TEST_ACCURACY
from dfl_bench.tasks.contract import check_data_module
from dfl_bench.untrusted import unlinked


class JobFailed(RuntimeError):
    """A job ended without an ok record; in a sweep Hydra goes on and exits 1 at the end."""


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="config")
def main(cfg: DictConfig) -> float | None:
    """Hydra task function: train one configuration; returns its test accuracy.

    Exit codes: 0 every job ok or skipped; 1 a job failed or was already running (a sweep runs
    its other jobs first); 2 an invalid configuration (no job trained); 143 SIGTERM (the job
    saved a checkpoint; rerunning the command resumes it).
    """
    hydra_cfg = HydraConfig.get()
    try:
        built = prepared(cfg, hydra_cfg.overrides.task)
    except ValueError as err:
        print(f"[dfl_bench] invalid configuration: {escaped(str(err))}", file=sys.stderr)
        if hydra_cfg.mode != RunMode.MULTIRUN:
            leave_no_run_folder(hydra_cfg)
        raise SystemExit(EXIT_INVALID) from None
    try:
        record = run_prepared(cfg, hydra_cfg, built)
    except (AlreadyRunning, records.RecordNotWritten) as err:
        fail(f"[dfl_bench] {job_name(hydra_cfg)}: {err}", hydra_cfg)
    if record.get("status") != "ok":
        fail(f"[dfl_bench] {job_name(hydra_cfg)} failed: {record.get('reason')}", hydra_cfg)
    return record.get(TEST_ACCURACY)


def leave_no_run_folder(hydra_cfg: DictConfig) -> None:
    """Remove the folder Hydra made for a single run that was refused, when it holds nothing but
    Hydra's own `.hydra/` and its log (a refused run leaves nothing behind), and, where it is
    the default one (conf/config.yaml's `outputs/<experiment>/<time>` in the working folder),
    the two folders above it where they are then empty; never a folder a user named."""
    output = OmegaConf.select(hydra_cfg, "runtime.output_dir", default=None)
    if output is None:
        return
    folder = Path(output)
    own = {".hydra", f"{hydra_cfg.job.name}.log"}
    if folder.is_dir() and not folder.is_symlink() and {p.name for p in folder.iterdir()} <= own:
        shutil.rmtree(folder, ignore_errors=True)
        if folder.parent.parent != Path(hydra_cfg.runtime.cwd) / "outputs":
            return
        with contextlib.suppress(OSError):  # outputs/<experiment>/, then outputs/: when empty
            folder.parent.rmdir()
            folder.parent.parent.rmdir()


def fail(message: str, hydra_cfg: DictConfig) -> NoReturn:
    """End a job that did not succeed: exit 1 from a single run; in a sweep, raise JobFailed so
    Hydra records it, runs the remaining jobs, and exits 1 at the end."""
    if hydra_cfg.mode == RunMode.MULTIRUN:
        raise JobFailed(message)
    print(message, file=sys.stderr)
    raise SystemExit(EXIT_FAILED)


def prepared(cfg: DictConfig, overrides: Sequence[str]) -> Built:
    """The checked config, its run and its data module, built after seeding so the run's
    weights follow `seed`."""
    guards.check_seed(cfg.seed)
    L.seed_everything(cfg.seed, workers=True, verbose=False)  # before the weights are drawn
    return checked(cfg, overrides)


def run(cfg: DictConfig, hydra_cfg: DictConfig) -> dict[str, Any]:
    """One job, from its composed config: check and build it, then `run_prepared`."""
    return run_prepared(cfg, hydra_cfg, prepared(cfg, hydra_cfg.overrides.task))


def run_prepared(cfg: DictConfig, hydra_cfg: DictConfig, built: Built) -> dict[str, Any]:
    """One checked job: lock, skip if done, reuse, else train (resuming) and record (job.py)."""
    job = Job(cfg, hydra_cfg, *built)
    path, ckpt_dir = job.paths
    # a sweep's jobs run in folders of its sweep folder: their parent names the sweep
    output = OmegaConf.select(hydra_cfg, "runtime.output_dir", default=None)
    multirun = hydra_cfg.mode == RunMode.MULTIRUN and output is not None
    sweep = str(Path(output).parent) if multirun else None
    with job_lock(lock_paths(job.paths), sweep):
        settled = settled_record(job)
        if settled is not None:
            return settled
        return fit_runs([job], ckpt_dir)[0]


def checked(cfg: DictConfig, overrides: Sequence[str] = ()) -> Built:
    """The resolved config, its run and its data module, each setting checked where its object
    is built: a bad configuration raises ValueError here, before any data is loaded (values,
    ignored overrides, folders, operators, rows, optimizer, data settings)."""
    guards.check_present(cfg)  # `~data`: before anything reads it
    task = tasks.task_of(cfg)  # the job's task, looked up once
    guards.check_overrides(cfg, overrides, task)
    check_declared(cfg, overrides)  # rows, stages, rule: the experiment's own
    guards.check_deletions(overrides)  # after the row's, the stage's and a required key's
    config = resolved_config(cfg)
    guards.check_config(config, task=task)
    why = guards.uncalled_refusal(config, overrides)  # an operator no formula calls, set
    if why is not None:
        raise ValueError(why)
    guards.check_writable(to_absolute_path(cfg.records_dir), "records_dir")
    guards.check_writable(to_absolute_path(cfg.checkpoint_dir), "checkpoint_dir")
    record, ckpt_dir = job_paths(cfg, config)
    for place in (record.parent, record, ckpt_dir.parent, ckpt_dir):  # none writes elsewhere
        unlinked(place)
    check_device(cfg)
    effective_flags(config, cfg, list(overrides))
    loggers.check(config["logger"])
    operators = OperatorSet.from_config({kind: config[kind] for kind in KINDS})
    module = task.build(config, operators)  # the task's run for this config
    data = task.data([config])  # built, not loaded: nothing is read yet
    check_data_module(data, task.NAME)
    return Built(config, module, data)
