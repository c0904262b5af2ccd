"""Plan a reproduction: every job of the chosen experiments (their Hydra sweeps times the seeds),
its run record path, whether that record is already ok, and an estimated time for the rest; and
the overrides beside the tables it refuses (`check_cell_meaning`), and those no tool that plans
runs takes (`check_planned`)."""

from __future__ import annotations

import os
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.errors import HydraException
from omegaconf import DictConfig, open_dict
from omegaconf.errors import OmegaConfBaseException

from dfl_bench.lifecycle import guards, records, resolve, sweep
from dfl_bench.lifecycle.declared import DECLARED
from dfl_bench.lifecycle.override_gate import by_key
from dfl_bench.results import config_cache
from dfl_bench.results.cell_configs import (
    BEYOND_BUDGETS,
    CONF,
    SPREAD,
    base_overrides,
    budget,
    budget_overrides,
    experiments,
    own_budget,
    profiles,
)
from dfl_bench.untrusted import plain_name

# Overrides that leave what every job trains alone: logging, paths, flags, names, `hydra.*`; a
# row and what its experiment declares (`rows.*`, `families.*`, ...) are what a job trains.
DEFINES_ROWS = ("row", *DECLARED)
UNHASHED = (*(k for k in records.NOT_HASHED if k not in DEFINES_ROWS), "hydra")
# What a tool that plans runs (reproduce; campaign.seed_plan's run) sets on each job's command
# itself: which job it is (seed, budget, experiment) and where it writes records, logs and
# launches (`hydra.*`, but the config search path). An extra override of one trains other jobs
# than the planned ones, or where the tool neither counts nor locks them (a `checkpoint_dir` it
# does not set: given again, a rerun resumes there).
PLANNED = ("seed", "profile", "experiment", "records_dir", "logger", "hydra")
SEARCH_PATH = "hydra.searchpath"  # where configs are found (files outside conf/): not planned
CELL = "cell"  # check_planned's `how` key for an override that changes which cell a job trains


# Seconds per job end to end when no record of the profile says otherwise: one torch thread on
# a CPU, from README "Training" (quick; long scaled by its steps) and
# results/bench/ (paper).
JOB_SECONDS = {"smoke": 3.0, "quick": 82.0, "long": 600.0, "paper": 3300.0}
# What a job costs beyond its records' wall_time_s (training only): start, data, evaluation setup.
JOB_OVERHEAD_S = 3.0
# Seconds per run-iteration in a GPU stack when no GPU record says better (results/bench/cuda/).
GPU_ITERATION_S = 0.5e-3
CONFIG_HASH = re.compile(r"[0-9a-f]{16}")  # records.config_hash: a record's file name


@dataclass(frozen=True)
class Job:
    """One training run of a reproduction: its experiment, overrides and run record."""

    experiment: str
    overrides: tuple[str, ...]
    path: Path

    def done(self) -> bool:
        """Whether its run record says ok (train.py skips it then)."""
        return records.is_done(self.path)


def n_seeds(experiment: str, seeds: int, spread_seeds: int) -> int:
    """Seeds per row: `seeds`, at least `spread_seeds` for the SPREAD experiments."""
    return max(seeds, spread_seeds) if experiment in SPREAD else seeds


def launcher(device: str, jobs: int, stack_size: int) -> list[str]:
    """A reproduction multirun's launcher overrides: on a GPU its runs as stacks of at most
    `stack_size`; on the CPU `jobs` at once (joblib), each its share of the cores whatever an
    experiment asks (threads=null); else Hydra's basic launcher."""
    if device == "gpu":
        return ["hydra/launcher=stack", "trainer=gpu", f"hydra.launcher.stack_size={stack_size}"]
    if jobs > 1:
        return ["hydra/launcher=parallel", f"hydra.launcher.n_jobs={jobs}", "threads=null"]
    return []


def check(profile: str, seeds: int, spread_seeds: int) -> None:
    """A known profile, at least one seed per row and no negative spread (ValueError)."""
    if profile not in profiles():
        raise ValueError(f"unknown profile {profile!r}; valid: {profiles()}")
    if seeds < 1:
        raise ValueError(f"SEEDS must be >= 1 (got {seeds})")
    if spread_seeds < 0:
        raise ValueError(f"SPREAD_SEEDS must be >= 0 (got {spread_seeds})")


def plan(
    names: Iterable[str],
    profile: str,
    seeds: int,
    records_dir: str | Path,
    spread_seeds: int = 0,
    overrides: Sequence[str] = (),
) -> list[Job]:
    """Every job of `names` at `profile` with seeds 0..n-1 (n = max(seeds, spread_seeds) for the
    SPREAD experiments), each config composed and resolved as train.py does, so its record path
    is the one the run writes; an invalid job raises ValueError (all of them named at once). The
    committed experiments' operators and optimizers are valid (tests compose every job), so they
    are built here only under extra `overrides` (building imports torch); each job checks its own
    again before it trains."""
    check(profile, seeds, spread_seeds)
    common = [f"records_dir={records_dir}", *overrides]
    folder = Path(records_dir).resolve()  # as train.py's to_absolute_path, from this folder
    jobs, errors = [], []
    for name in names:
        n = n_seeds(name, seeds, spread_seeds)
        base = [*base_overrides(name), *budget_overrides(name, profile), *common]
        jobs_of = partial(experiment_jobs, base, n, bool(overrides))
        try:
            if any(o.startswith("hydra.searchpath") for o in overrides):  # files outside conf/
                planned = jobs_of()
            else:
                key = [name, profile, n, list(overrides)]
                planned = config_cache.cached("plan", key, jobs_of, partial(cached_jobs, n=n))
        except InvalidJobs as err:
            errors += [f"{name} {line}" for line in err.args[0]]
            continue
        for job, experiment, digest in planned:
            jobs.append(Job(name, tuple(job), records.record_path(folder, experiment, digest)))
    if errors:
        raise ValueError(f"{len(errors)} invalid job(s): " + "; ".join(errors))
    return jobs


def cached_jobs(value: Any, n: int) -> list[list[Any]]:
    """`value`, an experiment's jobs read back from the config cache (this user's own folder:
    cache_place.own_folder; a file of it cut off or of an older shape is no plan), where it has
    their shape: a list of [overrides, experiment, config hash], the overrides printable
    `key=value` texts with one `seed=` of 0..n-1, the experiment a plain name (a folder under
    the records), the hash 16 hex digits; a ValueError else (computed again then)."""
    seeds = {f"seed={seed}" for seed in range(n)}
    if not isinstance(value, list) or not value:
        raise ValueError("no list of planned jobs")
    for item in value:
        job, experiment, digest = item if isinstance(item, list) and len(item) == 3 else [0] * 3
        if not (
            isinstance(job, list)
            and all(isinstance(o, str) and o.isprintable() and "=" in o for o in job)
            and sum(o.startswith("seed=") for o in job) == 1
            and bool(seeds.intersection(job))
            and plain_name(experiment)
            and isinstance(digest, str)
            and CONFIG_HASH.fullmatch(digest)
        ):
            raise ValueError(f"no planned job: {str(item)[:80]}")
    return value


class InvalidJobs(ValueError):
    """Jobs of one experiment that do not compose or check: one line each."""


def experiment_jobs(base: Sequence[str], n: int, operators: bool) -> list[list[Any]]:
    """[overrides, experiment_name, config hash] of every job of the experiment `base` selects,
    seeds 0..n-1, each composed and resolved as train.py does (`operators`: also build its
    operators); InvalidJobs names every job that fails."""
    planned, errors = [], []
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        whole = compose("config", overrides=list(base), return_hydra_config=True)
        params = dict(whole.hydra.sweeper.params or {})
        with open_dict(whole):
            del whole["hydra"]  # then it is what `compose(base)` gives
        composed: dict[tuple[str, ...], DictConfig] = {(): whole}
        setting: sweep.Setting = {}
        for job in sweep.expand([f"seed={','.join(map(str, range(n)))}"], params):
            try:
                config = resolve.resolved_config(
                    sweep.shared_job_config(base, job, composed, setting)
                )
                guards.check_config(config)
                if operators:  # what each job builds before it loads data (torch: not otherwise)
                    check_built(config)
            except (ValueError, HydraException, OmegaConfBaseException) as err:
                errors.append(f"{' '.join(job)}: {err}")
                continue
            planned.append([list(job), config["experiment_name"], records.config_hash(config)])
    if errors:
        raise InvalidJobs(errors)
    return planned


def check_built(config: dict[str, Any]) -> None:
    """Build the job's operators and its optimizer (`tasks.optim.spec`) as its own check does: an
    unknown name or a value out of range is a ValueError."""
    from dfl_bench.operators import KINDS, OperatorSet
    from dfl_bench.tasks.optim import spec

    OperatorSet.from_config({kind: config[kind] for kind in KINDS})
    spec(config["optimizer"], config["profile"]["max_steps"])


def unusable(jobs: Sequence[Job], records_dir: str | Path) -> list[str]:
    """One line per file under the jobs' experiment folders that is no whole, valid run record:
    at a job's path it is rerun (the file kept as `<name>.invalid`), elsewhere ignored."""
    paths = {job.path for job in jobs}
    folders = sorted({job.path.parent for job in jobs})
    lines = []
    for path in sorted(p for folder in folders for p in folder.glob("*.json")):
        why = records.defect(path)
        if why is not None:
            fate = "its job reruns, keeping it as .invalid" if path in paths else "ignored"
            lines.append(f"{path}: not a run record ({why}); {fate}")
    return lines


def job_seconds(profile: str, records_dir: str | Path, device: str = "cpu") -> float:
    """Seconds per job at `profile`: the median wall time of the ok records of that profile
    under `records_dir` plus JOB_OVERHEAD_S, else JOB_SECONDS[profile]; on a GPU a stacked
    run's share of its stack's wall time, else GPU_ITERATION_S per step."""
    times = []
    for path in Path(records_dir).rglob("*.json"):
        record = records.read_record(path)
        if record and record.get("status") == "ok" and record.get("profile") == profile:
            wall, stack = record.get("wall_time_s"), record.get("stack")
            if isinstance(wall, int | float) and (device == "gpu") == bool(stack):
                times.append(float(wall) / len(stack) if stack else float(wall) + JOB_OVERHEAD_S)
    if times:
        return statistics.median(times)
    if device == "gpu":
        return budget(profile if profile in profiles() else "quick") * GPU_ITERATION_S
    return JOB_SECONDS.get(profile, JOB_SECONDS["quick"])


def estimate(missing: int, seconds_per_job: float, n_jobs: int, device: str = "cpu") -> float:
    """Seconds for `missing` jobs run `n_jobs` at a time (at most one per core; on a GPU the
    per-job time is already a stack's share)."""
    if device == "gpu":
        return missing * seconds_per_job
    return missing * seconds_per_job / max(1, min(n_jobs, os.cpu_count() or 1))


def aside(names: Sequence[str], profile: str) -> list[str]:
    """One line per table left out: reproduced at other budgets than `profile`."""
    return [
        f"{name}: its table is reproduced at {', '.join(BEYOND_BUDGETS[name])}, not {profile}: "
        f"left out (PROFILE={BEYOND_BUDGETS[name][0]} TABLES={name} trains it)"
        for name in names
    ]


def why_planned(name: str, missing: Sequence[Job], profile: str) -> str:
    """Why an experiment's jobs train: how many have no ok record at which budget, the first."""
    own = own_budget(name)
    at = f"at its own budget {own!r}" if own else f"at {profile}"
    first = missing[0]
    return (
        f"{len(missing)} job(s) {at} have no ok record (the first: "
        f"{' '.join(first.overrides)}, {first.path})"
    )


def check_cell_meaning(overrides: Sequence[str]) -> None:
    """Overrides that change a job's config hash change what a table cell means: they need an
    `experiment_name` of their own (not a table's), so their runs never join the table's; each
    judged by the key and value Hydra parses it to (override_gate.by_key), however spelled."""
    keys = by_key(overrides)
    set_to = {key: o.value() for key, o in keys.items() if not o.is_delete()}
    declared = [o for key, o in keys.items() if key.split(".")[0] in DEFINES_ROWS]
    if declared:
        raise ValueError(
            f"{declared[0].input_line.strip()}: a reproduction trains every row of its tables as "
            "declared; choose tables with --tables (TABLES=), or train one row: python -m "
            "dfl_bench +experiment=NAME row=ROW"
        )
    if set_to.get("trainer") == "gpu":
        raise ValueError(
            "trainer=gpu: train on the GPU with --device gpu (DEVICE=gpu), which fills the same "
            "cells (the device is not hashed) and runs each experiment as stacks"
        )
    named = set_to.get("experiment_name")
    if isinstance(named, str) and named in experiments():
        raise ValueError(
            f"experiment_name={named} is a table's: name a separate experiment for a changed "
            "configuration"
        )
    changing = [o for key, o in keys.items() if re.split(r"[./]", key)[0] not in UNHASHED]
    if changing and named is None:
        raise ValueError(
            f"{changing[0].input_line.strip()} changes what a table cell means: name a separate "
            "experiment (experiment_name=<new name>, as make scope-comparison does)"
        )


def check_planned(overrides: Sequence[str], how: Mapping[str, str]) -> None:
    """Refuse an extra override of a PLANNED key, however spelled (override_gate.by_key): one
    ValueError line naming it and `how[key]`, how the tool sets it; where `how` has CELL, any
    override that changes which cell a job trains (a hashed key, a row, experiment_name) too."""
    for key, override in by_key(overrides).items():
        root = re.split(r"[./]", key)[0]
        if key.startswith(SEARCH_PATH):
            continue
        if root in PLANNED:
            raise ValueError(f"{override.input_line.strip()}: {how[root]}")
        if CELL in how and (root not in UNHASHED or root == "experiment_name"):
            raise ValueError(f"{override.input_line.strip()}: {how[CELL]}")
