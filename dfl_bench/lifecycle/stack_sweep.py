"""A sweep's jobs trained as stacks of runs in one process (`hydra/launcher=stack`).

    run_sweep(jobs, stack_size)   each job: skipped / reused / trained, its record written

Jobs whose configs agree on what one model must share (`stack_key`: the task and what it asks
its runs of one stack to share (the paper's: the knowledge base, a DFL term or none),
optimizer, profile, data settings but the seeds, model, network, augmentation, trainer,
threads) form groups; a group's jobs are locked, skipped when their record says ok or reused
from another experiment (as a separate job), and the rest train in stacks of at most
`stack_size` through the one lifecycle of a job (`job.fit_runs`). A stack's checkpoint
(`<checkpoint_dir>/_stacks/<digest>/last.ckpt`, its runs listed in `members.json`) resumes the
whole stack, also when some of its runs already wrote their records.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from hydra.utils import to_absolute_path

from dfl_bench import tasks
from dfl_bench.lifecycle import checkpoint, records, train
from dfl_bench.lifecycle.job import Job, fit_runs, lock_paths, settled_record
from dfl_bench.lifecycle.lock import AlreadyRunning, job_lock

# net: one StackNet holds one architecture; augment: a stack trains grouped (CUDA) only when no run
# augments (`job.grouped_layout`), so that runs which differ in it never share a layout
SHARED = ("optimizer", "profile", "model", "net", "augment", "trainer", "threads")


def stack_key(config: Mapping[str, Any]) -> str:
    """What runs of one stack must share, as a string (SHARED, the task's settings and what it
    asks its runs of a stack to share (`Task.stack_key`), data settings but the seeds, the debug
    SIGTERM hook). The Trainer takes no setting that couples runs (`trainer_values.PASSED`:
    gradient clipping, one norm over the stack, is refused)."""
    data = {k: v for k, v in config["data"].items() if k != "split_seed"}
    shared = {
        "task": [config.get("task"), tasks.task_of(config).stack_key(config)],
        "data": data,
        **{k: config.get(k) for k in SHARED},
        "sigterm_at_step": config["debug"].get("sigterm_at_step"),  # a test hook of the process
    }
    return json.dumps(shared, sort_keys=True, default=str)


def run_sweep(jobs: Sequence[Job], stack_size: int) -> None:
    """Run every job (module doc): afterwards each has its `record` or its `error`. A job with
    the config hash of an earlier job of the sweep is that job's (skipped, as a separate job
    finds the record its twin wrote)."""
    if stack_size < 1:
        raise ValueError(f"hydra.launcher.stack_size must be >= 1, got {stack_size}")
    groups: dict[str, list[Job]] = {}
    twins: dict[str, list[Job]] = {}
    for job in jobs:
        try:
            job.config, job.module, job.data = train.prepared(job.cfg, job.hydra_cfg.overrides.task)
        except ValueError as err:
            job.error = f"[dfl_bench] invalid configuration: {err}"
            continue
        path = str(job.paths[0])
        if path in twins:
            twins[path].append(job)
            continue
        twins[path] = [job]
        groups.setdefault(stack_key(job.config), []).append(job)
    for group in groups.values():
        with ExitStack() as held:
            pending = [job for job in group if _lock_and_settle(job, held)]
            for stack in _resumed_stacks(group, pending) + _new_stacks(pending, stack_size):
                _train(stack)
    for first, *others in twins.values():
        for job in others:
            job.record = records.read_record(first.paths[0]) if first.record else None
            if job.record is not None and first.error is None:
                print(f"[dfl_bench] skipping {job.name}: the same configuration as {first.name}")
    for job in jobs:
        if job.error is None and (job.record or {}).get("status") != "ok":
            job.error = f"[dfl_bench] {job.name} failed: {(job.record or {}).get('reason')}"


def _lock_and_settle(job: Job, held: ExitStack) -> bool:
    """Lock the job (held until its group ends); True when it must train."""
    try:
        held.enter_context(job_lock(lock_paths(job.paths)))
    except AlreadyRunning as err:
        job.error = f"[dfl_bench] {job.name}: {err}"
        return False
    job.record = settled_record(job)
    return job.record is None


def _resumed_stacks(group: Sequence[Job], pending: list[Job]) -> list[list[Job]]:
    """Stacks with a checkpoint that holds pending jobs, re-formed with all their runs (those
    already recorded train along, so that the others end at the uninterrupted numbers); their
    pending jobs leave `pending`."""
    by_key = {job.key: job for job in group}
    out = []
    root = _stacks_root(group[0])
    for members in sorted(root.glob(f"*/{checkpoint.MEMBERS}")) if root.is_dir() else []:
        keys = checkpoint.read_members(members.parent) or []
        stack = [by_key.get(k) for k in keys]
        waiting = [job for job in stack if job in pending]
        if not keys or None in stack or not waiting:
            continue
        if any(job.cfg.force for job in waiting):  # force=true restarts the stack's runs
            shutil.rmtree(members.parent, ignore_errors=True)
            continue
        if checkpoint.resumable(members.parent, keys) is None:
            continue
        out.append(stack)
        for job in waiting:
            pending.remove(job)
    return out


def _new_stacks(pending: Sequence[Job], stack_size: int) -> list[list[Job]]:
    """The pending jobs in stacks of at most `stack_size`."""
    return [list(pending[i : i + stack_size]) for i in range(0, len(pending), stack_size)]


def _train(stack: Sequence[Job]) -> None:
    """Train one stack and record each of its runs that has no ok record; an error fails this
    stack's unrecorded jobs only."""
    try:
        ckpt_dir = stack[0].paths[1] if len(stack) == 1 else stack_dir(stack)
        keep = [job.record is not None for job in stack]
        for job, record in zip(stack, fit_runs(stack, ckpt_dir, keep), strict=True):
            job.record = record
    except Exception as err:  # as Hydra's basic launcher: the sweep's other jobs go on
        for job in stack:
            if job.record is None:
                job.error = f"[dfl_bench] {job.name} failed: {type(err).__name__}: {err}"


def _stacks_root(job: Job) -> Path:
    """The folder of the stacks' checkpoint folders."""
    return Path(to_absolute_path(job.cfg.checkpoint_dir)) / "_stacks"


def stack_dir(stack: Sequence[Job]) -> Path:
    """The stack's checkpoint folder, named by its runs' experiments and config hashes."""
    digest = hashlib.sha256("\n".join(sorted(j.key for j in stack)).encode()).hexdigest()[:16]
    return _stacks_root(stack[0]) / digest
