"""A job's lifecycle, the same for one run and for a stack of R runs (`fit_runs`):

  1. its record path and checkpoint folder are named by its config hash (`job_paths`); it is
     locked and skipped when its record says ok, or reused from another experiment's record of
     the same hash (`settled_record`);
  2. it trains for `profile.max_steps` steps, resuming from a whole `last.ckpt`, so an
     interrupted job ends at the uninterrupted numbers (checkpoint.py);
  3. each run's record is written (ok only after the final evaluation at max_steps; failed with
     the reason when its loss turned NaN/inf, which ends that run but not the sweep), its logger
     finished, and its summary printed; SIGTERM saves a checkpoint and exits 143.

Every job, one run or a stack of R, trains as one `training.RunsModule` of its task's runs
(dfl_bench/tasks/): each run's own network on a CPU (its arithmetic the run alone's); on a GPU
the grouped layout and CUDA graphs where the task's runs have one.
"""

from __future__ import annotations

import math
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import lightning as L
import torch
from hydra.utils import to_absolute_path
from lightning.pytorch.utilities.exceptions import SIGTERMException
from omegaconf import DictConfig

from dfl_bench import tasks
from dfl_bench.exits import EXIT_INTERRUPTED, EXIT_TERMINATED  # noqa: E402
from dfl_bench.lifecycle import checkpoint, loggers, origin, records
from dfl_bench.lifecycle.private_api import set_received_sigterm
from dfl_bench.lifecycle.trainer import build_trainer, callbacks, torch_threads, uses_cuda
from dfl_bench.paths import REPO_DIR
from dfl_bench.schema import (
    BEST_TEST_ACCURACY,
    GRADIENT_REACHED,
    TEST_ACCURACY,
    TEST_AT_BEST_VALIDATION,
    VALIDATION_ACCURACY,
)
from dfl_bench.tasks.contract import Task, TaskRun
from dfl_bench.training import RunsModule


class Built(NamedTuple):
    """What a job's check builds from its composed config (train.checked), handed on to train."""

    config: dict[str, Any]  # resolved and checked
    module: TaskRun  # its run
    data: Any  # its task's data module for this run alone, not loaded


@dataclass
class Job:
    """One job: its composed config and Hydra node, what its check built, then what running it
    gave."""

    cfg: DictConfig
    hydra_cfg: DictConfig
    config: dict[str, Any] = field(default_factory=dict)
    module: TaskRun | None = None  # its run
    data: Any = None  # its data module (Built.data) until training takes it
    record: dict[str, Any] | None = None
    error: str | None = None  # why it has no ok record (for Hydra's JobFailed)

    @property
    def name(self) -> str:
        """The job's name (its overrides)."""
        return job_name(self.hydra_cfg)

    @property
    def paths(self) -> tuple[Path, Path]:
        """Its record path and checkpoint folder."""
        return job_paths(self.cfg, self.config)

    @cached_property
    def task(self) -> Task:
        """The task its config names (dfl_bench/tasks/), looked up once."""
        return tasks.task_of(self.config)

    @property
    def key(self) -> str:
        """`<experiment>/<config hash>`: what names its record and its place in a stack."""
        return f"{self.config['experiment_name']}/{self.paths[0].stem}"


def job_name(hydra_cfg: DictConfig) -> str:
    """The job's overrides (Hydra's override_dirname), or 'default' when there are none."""
    return hydra_cfg.job.override_dirname or "default"


def job_paths(cfg: DictConfig, config: Mapping[str, Any]) -> tuple[Path, Path]:
    """The job's record path and checkpoint folder (both named by its config hash)."""
    digest = records.config_hash(config)
    experiment = config["experiment_name"]
    path = records.record_path(to_absolute_path(cfg.records_dir), experiment, digest)
    return path, Path(to_absolute_path(cfg.checkpoint_dir)) / experiment / digest


def lock_paths(paths: tuple[Path, Path]) -> list[Path]:
    """The job's lock files (`job_paths`): beside its record, then beside its checkpoint folder."""
    record, ckpt_dir = paths
    return [record.with_name(f".{record.stem}.lock"), ckpt_dir.with_name(f"{ckpt_dir.name}.lock")]


def settled_record(job: Job) -> dict[str, Any] | None:
    """The record of a (locked) job that need not train: ok already and of its configuration
    (skipped; one of another configuration at its path is kept aside when it trains), or
    trained by another experiment (reused); None when it must train (force=true drops its
    checkpoint)."""
    cfg, config = job.cfg, job.config
    path, ckpt_dir = job.paths
    if cfg.force:
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    elif records.is_done(path):
        print(f"[dfl_bench] skipping {job.name}: {path} says ok (force=true reruns it)")
        return records.read_record(path) or {}
    elif reused := records.reuse_done(
        to_absolute_path(cfg.records_dir),
        path,
        experiment=config["experiment_name"],
        name=job.name,
        row=config.get("row"),
        config=config,
        overrides=list(job.hydra_cfg.overrides.task),
    ):
        print(summary_text(reused, path))
        return reused
    return None


@dataclass(frozen=True)
class Fitted:
    """What one fit of a job's runs gave beside the module: when and how long it trained
    (segments: each resumed stretch), whether it resumed, why it could not go on (its
    checkpoint could not be written), the stack it trained in and the machine."""

    started: str
    segments: list[float]
    resumed: bool
    broken: str | None
    stack: list[str] | None
    machine: dict[str, Any]


def fit_runs(
    jobs: Sequence[Job], ckpt_dir: Path, keep: Sequence[bool] | None = None
) -> list[dict[str, Any]]:
    """Train the jobs together (R >= 1 runs of one RunsModule), resuming from `ckpt_dir/last.ckpt`;
    then write each job's record (except where `keep` says its ok record stands), close its
    logger and print its summary. A job's record is what its separate run writes."""
    cfg = jobs[0].cfg
    keep = list(keep or [False] * len(jobs))
    torch.set_num_threads(torch_threads(cfg.threads, jobs[0].hydra_cfg))
    run_loggers = _loggers(jobs)
    data, module = _built(jobs, run_loggers)
    hooks = callbacks(cfg, ckpt_dir)
    trainer = build_trainer(cfg, hooks)
    last = checkpoint.resumable(ckpt_dir, [j.key for j in jobs])
    checkpoint.write_members(ckpt_dir, [j.key for j in jobs])
    started, tic = now(), time.perf_counter()
    broken, interrupted = _fit(trainer, module, data, last, run_loggers, jobs, ckpt_dir)
    fitted = Fitted(
        started=started,
        segments=[*_last_checkpoint(hooks).earlier_s, round(time.perf_counter() - tic, 3)],
        resumed=last is not None,
        broken=broken,
        stack=[j.key for j in jobs] if module.grouped else None,
        machine=origin.machine(cuda=uses_cuda(cfg)),
    )
    out = [
        (records.read_record(job.paths[0]) or {}, job.paths[0])
        if keep[r]
        else _write_record(job, r, module, data, fitted, run_loggers[r], ckpt_dir)
        for r, job in enumerate(jobs)
    ]
    for kept_aside in checkpoint.clean(ckpt_dir):
        print(f"[dfl_bench] {kept_aside} (set aside at the start) is kept", file=sys.stderr)
    _close(run_loggers, [record.get("status") != "ok" for record, _ in out])
    for (record, path), kept in zip(out, keep, strict=True):
        if not kept:
            print(summary_text(record, path))
    if trainer.received_sigterm:
        terminated(", ".join(j.name for j in jobs), trainer.global_step, None, interrupted)
    return [record for record, _ in out]


def _loggers(jobs: Sequence[Job]) -> list[Any]:
    """Each job's logger (conf/logger), named and grouped by its job and experiment."""
    return [
        loggers.build_logger(
            j.config["logger"],
            name=j.name,
            group=j.config["experiment_name"],
            config=j.config,
            save_dir=j.hydra_cfg.runtime.output_dir,
            concurrent=len(jobs) > 1,
        )
        for j in jobs
    ]


def _fit(
    trainer: L.Trainer,
    module: RunsModule,
    data: Any,
    last: Path | None,
    run_loggers: list[Any],
    jobs: Sequence[Job],
    ckpt_dir: Path,
) -> tuple[str | None, list[int]]:
    """trainer.fit from `last` (if any): why the job could not go on (its checkpoint could not
    be written) or None, and the Ctrl-C signals it received; SIGTERM ends the process (143)."""
    broken, interrupted = None, []
    try:
        with stop_on_ctrl_c(trainer) as interrupted:
            trainer.fit(
                module, datamodule=data, ckpt_path=str(last) if last else None, weights_only=True
            )
    except SIGTERMException:
        _close(run_loggers, [True] * len(jobs))
        names = ", ".join(j.name for j in jobs)
        terminated(names, trainer.global_step, ckpt_dir / checkpoint.NAME, interrupted)
    except checkpoint.CheckpointNotWritten as err:
        broken = f"{err} at step {trainer.global_step}"
    except BaseException:
        _close(run_loggers, [True] * len(jobs))
        raise
    return broken, interrupted


def _write_record(
    job: Job,
    r: int,
    module: RunsModule,
    data: Any,
    fitted: Fitted,
    run_logger: Any,
    ckpt_dir: Path,
) -> tuple[dict[str, Any], Path]:
    """Run r's record (its status, summary and provenance), written beside its config hash
    and summarized to its logger."""
    path = job.paths[0]
    status, reason = final_status(
        module.failure(r), module.global_step, module.members[r].evaluated_step,
        job.cfg.profile.max_steps,
    )  # fmt: skip
    if fitted.broken is not None:
        status, reason = "failed", fitted.broken
    record = records.make_record(
        status=status,
        reason=reason,
        config=job.config,
        summary=module.summary(r),
        experiment=job.config["experiment_name"],
        name=job.name,
        row=job.config.get("row"),
        config_hash=path.stem,
        overrides=list(job.hydra_cfg.overrides.task),
        data_checksum=data.checksum if data.arrays is not None else None,
        git_commit=origin.git_commit(REPO_DIR),
        wall_time_s=round(sum(fitted.segments), 3),
        wall_segments_s=fitted.segments,
        resumed=fitted.resumed,
        started=fitted.started,
        finished=now(),
        log_dir=loggers.log_dir(run_logger),
        torch_threads=torch.get_num_threads(),
        machine=fitted.machine,
        **({"stack": fitted.stack} if fitted.stack else {}),
    )
    try:
        records.write_record(path, records.portable(record, (Path.cwd(), REPO_DIR)))
    except OSError as err:
        raise records.RecordNotWritten(
            f"cannot write its record {path} ({err.strerror or err}); the run trained to its "
            f"end and its checkpoint is kept in {ckpt_dir}: make {path.parent} writable and "
            "rerun the same command, which resumes there and writes the record"
        ) from None
    loggers.summarize(run_logger, record)
    return record, path


def _last_checkpoint(hooks: Sequence[L.Callback]) -> checkpoint.LastCheckpoint:
    """The job's LastCheckpoint callback (it keeps the wall time of earlier segments)."""
    return next(h for h in hooks if isinstance(h, checkpoint.LastCheckpoint))


def _built(jobs: Sequence[Job], run_loggers: Sequence[Any]) -> tuple[Any, RunsModule]:
    """The data for the jobs' runs and the RunsModule that trains them (the grouped layout where
    `grouped_layout` allows it). One job's data is the module its check built, taken from
    the job (which then holds no loaded data); a stack of several trains on one data module of
    all its runs."""
    cfg = jobs[0].cfg
    task = jobs[0].task
    cuda = uses_cuda(cfg)
    grouped = grouped_layout(cuda, [j.module for j in jobs])
    module = RunsModule(
        [j.module for j in jobs],
        run_loggers,
        [j.cfg.debug.nan_at_step for j in jobs],
        grouped=grouped,
        cuda_graph=grouped and bool(cfg.get("cuda_graph", True)),
        compile_dfl=grouped and bool(cfg.get("compile_dfl", False)),
        keys=[j.key for j in jobs],
    )
    alone = jobs[0].data if len(jobs) == 1 else None
    data = alone if alone is not None else task.data([j.config for j in jobs])
    for j in jobs:
        j.data = None  # from here the training holds it
    return data, module


def grouped_layout(cuda: bool, members: Sequence[TaskRun]) -> bool:
    """Whether a stack trains in the grouped layout (`RunsModule`, grouped=True): on CUDA where
    every run is GROUPED. The grouped path forwards the raw batch (`DFLRun.grouped_outputs`
    applies no augmentation), so a run that augments (`augment.is_on`) or has no paper network
    is not GROUPED and its stack trains each run's own network, whose `step_loss` augments."""
    return cuda and all(m.GROUPED for m in members)


def final_status(
    failure: str | None, step: int, evaluated: int, max_steps: int
) -> tuple[str, str | None]:
    """failed with `failure` when the loss turned non-finite; else ok only when the run reached
    max_steps and evaluated there (never a stale accuracy)."""
    if failure is not None:
        return "failed", failure
    if step != max_steps or evaluated != max_steps:
        return "failed", (
            f"no final evaluation: training ended at step {step}, last evaluated "
            f"at step {evaluated}, budget {max_steps}"
        )
    return "ok", None


def _close(run_loggers: Sequence[Any], failed: Sequence[bool]) -> None:
    """Finalize and close each run's logger (no Trainer owns them)."""
    for logger, bad in zip(run_loggers, failed, strict=True):
        if logger is not None:
            logger.finalize("failed" if bad else "success")
        loggers.finish(logger, failed=bad)


@contextmanager
def stop_on_ctrl_c(trainer: L.Trainer) -> Iterator[list[int]]:
    """Ctrl-C (SIGINT) stops the job as SIGTERM does: after the running step, its checkpoint
    saved; the list it yields holds the signal once one came. A second Ctrl-C stops at once."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return

    def stop(signum: int, frame: object) -> None:
        got.append(signum)
        set_received_sigterm(trainer, True)
        signal.signal(signal.SIGINT, previous)

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield got
    finally:
        signal.signal(signal.SIGINT, previous)


def terminated(name: str, step: int, saved: Path | None, interrupted: Sequence[int]) -> NoReturn:
    """Report SIGTERM (exit 143) or Ctrl-C (exit 130); the sweep's remaining jobs are not run."""
    where = f"checkpoint {saved}" if saved is not None and saved.is_file() else "its record"
    what, code = ("Ctrl-C", EXIT_INTERRUPTED) if interrupted else ("SIGTERM", EXIT_TERMINATED)
    print(
        f"[dfl_bench] {name}: {what} at step {step}; saved {where}. The remaining jobs of this "
        "sweep were not run: rerun the same command to resume (finished jobs are skipped).",
        file=sys.stderr,
    )
    raise SystemExit(code)


def now() -> str:
    """The current UTC time in ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def summary_text(record: Mapping[str, Any], path: Path) -> str:
    """The closing lines of a run: accuracy and the gradient ratios of Section 9.1, as percent."""

    def pct(key: str) -> str:
        value = record.get(key)
        if value is None:
            return "n/a"
        return f"{100 * value:.1f}%" if math.isfinite(value) else "undefined"

    status = record["status"] + (f" ({record['reason']})" if record["reason"] else "")
    if record.get("reused_from"):
        status += f" (reused from {record['reused_from']}, not retrained)"
    measures = "  ".join(
        f"{label} {pct(key)}" for label, key in tasks.task_of(record["config"]).MEASURES
    )
    if record.get(VALIDATION_ACCURACY) is not None:  # a held-out split beside the test one
        measures += (
            f"  validation accuracy {pct(VALIDATION_ACCURACY)} (test at its best "
            f"{pct(TEST_AT_BEST_VALIDATION)})"
        )
    lines = [
        f"[dfl_bench] {record['experiment']} [{record['name']}] {status}",
        f"  test accuracy {pct(TEST_ACCURACY)} (best {pct(BEST_TEST_ACCURACY)})  "
        f"{measures}  steps {record['steps']}  wall {record['wall_time_s']:.0f}s",
        f"  record: {path}",
    ]
    if record.get(GRADIENT_REACHED) is False:
        lines.append("  no gradient reached the network: it trained nothing (see the record)")
    if record.get("log_dir"):
        lines.append(f"  logs: {record['log_dir']}")
    return "\n".join(lines)
