"""A sweep's jobs trained as stacks of runs in one process (`hydra/launcher=stacked`).

    run_sweep(jobs, stack_size)   each job: skipped / reused / trained, its record written

Jobs whose configs agree on what one model must share (`stack_key`: the problem and whether it
has a DFL term, optimizer, profile, data settings but the seeds, model, trainer, threads) form
groups; a group's jobs are locked, skipped when their record says ok or reused from another
experiment (as `train.run_prepared`), and the rest train in stacks of at most `stack_size`
(`StackedModule`; a stack of one trains as a plain job). Each run's record (fields, config hash,
path), logger run and result are those its separate job writes; a stack's checkpoint
(`<checkpoint_dir>/_stacks/<digest>/last.ckpt`) resumes the whole stack.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from hydra.utils import to_absolute_path
from lightning.pytorch.utilities.exceptions import SIGTERMException
from omegaconf import DictConfig

from dfl_bench import checkpoint, loggers, records, train
from dfl_bench.checkpoint import LastCheckpoint
from dfl_bench.lock import AlreadyRunning, job_lock
from dfl_bench.module import DFLModule
from dfl_bench.operators import KINDS
from dfl_bench.stacked_data import StackedDataModule
from dfl_bench.stacked_module import StackedModule

SHARED = ("optimizer", "profile", "model", "trainer", "threads")
MIXING = ("gradient_clip_val",)  # Trainer settings that couple the runs of a stack


@dataclass
class Job:
    """One sweep job: its composed config and Hydra node, then what running it gave."""

    cfg: DictConfig
    hydra_cfg: DictConfig
    config: dict[str, Any] = field(default_factory=dict)
    module: DFLModule | None = None
    record: dict[str, Any] | None = None
    error: str | None = None  # why it has no ok record (for Hydra's JobFailed)

    @property
    def name(self) -> str:
        """The job's name (its overrides, as `train.job_name`)."""
        return train.job_name(self.hydra_cfg)


def stack_key(config: Mapping[str, Any]) -> str:
    """What runs of one stack must share, as a string (SHARED, the problem, data settings but
    the seeds, the debug SIGTERM hook); a job whose Trainer couples runs (gradient clipping: one
    norm over the stack) gets a key of its own."""
    data = {k: v for k, v in config["data"].items() if k != "split_seed"}
    problem = config["problem"]
    shared = {
        "problem": [problem["name"], problem["w_dfl"] > 0],
        "data": data,
        **{k: config.get(k) for k in SHARED},
        "sigterm_at_step": config["debug"].get("sigterm_at_step"),  # a test hook of the process
    }
    if any(config["trainer"].get(k) is not None for k in MIXING):
        shared["alone"] = records.config_hash(config)
    return json.dumps(shared, sort_keys=True, default=str)


def _logic(config: Mapping[str, Any]) -> str:
    """A run's knowledge base and operators, as a string (runs equal here share one KB call)."""
    problem = {k: v for k, v in config["problem"].items() if k != "w_dfl"}
    return json.dumps([problem, *(config[k] for k in KINDS)], sort_keys=True, default=str)


def run_sweep(jobs: Sequence[Job], stack_size: int) -> None:
    """Run every job (module doc): afterwards each has its `record` or its `error`."""
    if stack_size < 1:
        raise ValueError(f"hydra.launcher.stack_size must be >= 1, got {stack_size}")
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        try:
            job.config, job.module = train.prepared(job.cfg, job.hydra_cfg.overrides.task)
        except ValueError as err:
            job.error = f"[dfl_bench] invalid configuration: {err}"
            continue
        groups.setdefault(stack_key(job.config), []).append(job)
    for group in groups.values():
        with ExitStack() as held:
            firsts: dict[Path, Job] = {}  # a later job of one config hash waits for the first
            pending = [job for job in group if _lock_and_settle(job, held, firsts)]
            for start in range(0, len(pending), stack_size):
                _train(pending[start : start + stack_size])
            for job in group:
                path, ckpt_dir = train.job_paths(job.cfg, job.config)
                first = firsts.get(path, job)
                if first is not job:  # as the plain launcher: skipped when the first is ok
                    job.record = train.settled_record(
                        job.cfg, job.hydra_cfg, job.config, path, ckpt_dir
                    )
                    if job.record is None:
                        job.error = f"[dfl_bench] {job.name}: one config hash with {first.name}"
                        job.error += ", which did not finish ok"
    for job in jobs:
        if job.error is None and (job.record or {}).get("status") != "ok":
            job.error = f"[dfl_bench] {job.name} failed: {(job.record or {}).get('reason')}"


def _lock_and_settle(job: Job, held: ExitStack, firsts: dict[Path, Job]) -> bool:
    """Lock the job (held until its group ends); True when it must train. A job whose record
    path an earlier job of the group holds (`firsts`) is settled after it trains."""
    path, ckpt_dir = train.job_paths(job.cfg, job.config)
    if firsts.setdefault(path, job) is not job:
        return False
    try:
        held.enter_context(job_lock(train.lock_path(ckpt_dir)))
    except AlreadyRunning as err:
        job.error = f"[dfl_bench] {job.name}: {err}"
        return False
    job.record = train.settled_record(job.cfg, job.hydra_cfg, job.config, path, ckpt_dir)
    return job.record is None


def _train(stack: Sequence[Job]) -> None:
    """Train one stack and record each run; an error fails this stack's jobs only."""
    try:
        if len(stack) == 1:
            job = stack[0]
            path, ckpt_dir = train.job_paths(job.cfg, job.config)
            job.record = train.fit_and_record(
                job.cfg, job.hydra_cfg, job.config, job.module, path, ckpt_dir
            )
        else:
            for job, record in zip(stack, fit_stack(stack), strict=True):
                job.record = record
    except Exception as err:  # as Hydra's basic launcher: the sweep's other jobs go on
        for job in stack:
            job.error = f"[dfl_bench] {job.name} failed: {type(err).__name__}: {err}"


def stack_dir(stack: Sequence[Job]) -> Path:
    """The stack's checkpoint folder, named by its runs' experiments and config hashes."""
    names = sorted(f"{j.config['experiment_name']}/{records.config_hash(j.config)}" for j in stack)
    digest = hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]
    return Path(to_absolute_path(stack[0].cfg.checkpoint_dir)) / "_stacks" / digest


def fit_stack(stack: Sequence[Job]) -> list[dict[str, Any]]:
    """`train.fit_and_record` for R runs at once: train the stack (resuming from its whole
    `last.ckpt`), then write each run's record, close its logger and print its summary."""
    cfg, hydra_cfg = stack[0].cfg, stack[0].hydra_cfg
    torch.set_num_threads(train.torch_threads(cfg.threads, hydra_cfg))
    data = StackedDataModule(
        stack[0].config["data"],
        seeds=[j.cfg.seed for j in stack],
        split_seeds=[
            j.cfg.seed if j.cfg.data.split_seed is None else j.cfg.data.split_seed for j in stack
        ],
    )
    run_loggers = [
        loggers.build_logger(
            j.config["logger"],
            name=j.name,
            group=j.config["experiment_name"],
            config=j.config,
            save_dir=j.hydra_cfg.runtime.output_dir,
            concurrent=True,
        )
        for j in stack
    ]
    module = StackedModule(
        [j.module for j in stack],
        run_loggers,
        [j.cfg.debug.nan_at_step for j in stack],
        shared_logic=len({_logic(j.config) for j in stack}) == 1,
    )
    ckpt_dir = stack_dir(stack)
    if any(j.cfg.force for j in stack):
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    hooks = [LastCheckpoint(ckpt_dir, cfg.profile.checkpoint_every)]
    if cfg.debug.get("sigterm_at_step") is not None:
        hooks.append(train.SigtermAt(cfg.debug.sigterm_at_step))
    trainer = train.build_trainer(cfg, None, hooks)
    last = checkpoint.resumable(ckpt_dir)
    names = ", ".join(j.name for j in stack)
    started = train.now()
    tic = time.perf_counter()
    try:
        trainer.fit(module, datamodule=data, ckpt_path=str(last) if last else None)
    except SIGTERMException:
        _close(run_loggers, [True] * len(stack))
        train.terminated(names, trainer.global_step, ckpt_dir / checkpoint.NAME)
    except BaseException:
        _close(run_loggers, [True] * len(stack))
        raise
    wall = round(time.perf_counter() - tic, 3)
    out = []
    for r, job in enumerate(stack):
        status, reason = module.status(r)
        path, _ = train.job_paths(job.cfg, job.config)
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
            git_commit=records.git_commit(train.REPO_DIR),
            wall_time_s=wall,
            resumed=last is not None,
            started=started,
            finished=train.now(),
            log_dir=loggers.log_dir(run_loggers[r]),
            torch_threads=torch.get_num_threads(),
        )
        records.write_record(path, records.portable(record, (Path.cwd(), train.REPO_DIR)))
        loggers.summarize(run_loggers[r], record)
        out.append((record, path))
    shutil.rmtree(ckpt_dir, ignore_errors=True)
    _close(run_loggers, [record["status"] != "ok" for record, _ in out])
    for record, path in out:
        print(train.summary_text(record, path))
    if trainer.received_sigterm:
        train.terminated(names, trainer.global_step, None)
    return [record for record, _ in out]


def _close(run_loggers: Sequence[Any], failed: Sequence[bool]) -> None:
    """Finalize and close each run's logger, as a single run's Trainer and job do."""
    for logger, bad in zip(run_loggers, failed, strict=True):
        if logger is not None:
            logger.finalize("failed" if bad else "success")
        loggers.finish(logger, failed=bad)
