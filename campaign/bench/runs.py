"""Timings of real CLI runs (`python -m dfl_bench ...` in a subprocess): paper-profile slices
extrapolated to 70,000 iterations, and the throughput of local parallel sweeps (joblib)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from campaign.bench.targets import PAPER_PROFILE
from dfl_bench.checks import tail_spelling
from dfl_bench.lifecycle import records
from dfl_bench.paths import REPO_DIR
from dfl_bench.schema import TEST_ACCURACY
from dfl_bench.untrusted import read_json

TAIL = 100  # steps of a slice's final window: one logging step of the paper's however short
PAPER_RUNS = REPO_DIR / "results" / "bench" / "paper_run"  # `make paper-run` writes here


def cli(
    overrides: Sequence[str], workdir: Path, multirun: bool = False
) -> tuple[float, list[dict]]:
    """Run the CLI with records/checkpoints/outputs under `workdir`; wall seconds and records."""
    workdir.mkdir(parents=True, exist_ok=True)
    out = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    command = [
        sys.executable,
        "-m",
        "dfl_bench",
        *overrides,
        f"records_dir={workdir / 'records'}",
        f"checkpoint_dir={workdir / 'checkpoints'}",
        f"{out}={workdir / 'outputs'}",
        "logger=none",
        "progress_bar=false",
        "force=true",
        *(["-m"] if multirun else []),
    ]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO_DIR, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    found = sorted((workdir / "records").rglob("*.json"))
    return wall, [read_json(p) for p in found]


def paper_slice(n: int) -> list[str]:
    """The paper profile's budget cut to `n` steps: its evaluations (at the last step only where
    n is below its cadence) and a final window of TAIL steps, each in its one spelling
    (guards.check_profile)."""
    every = min(n, PAPER_PROFILE.eval_every)
    tail = tail_spelling(min(TAIL, n), n)
    return [f"profile.max_steps={n}", f"profile.eval_every={every}", f"profile.metrics_tail={tail}"]


def paper_extrapolation(
    kb: str,
    steps: tuple[int, int],
    workdir: Path,
    total: int = 70_000,
    extra: Sequence[str] = (),
) -> dict[str, Any]:
    """Two paper-profile runs of n1 < n2 iterations. Extrapolated run = start-up + total x the
    longer run's mean seconds per iteration (its evaluations, logging, checkpoints and warm-up
    included: conservative); the marginal n1 -> n2 cost is reported beside it (load-sensitive)."""
    n1, n2 = steps
    if not 0 < n1 < n2 <= total:
        raise ValueError(f"need 0 < n1 < n2 <= {total}, got {steps}")
    walls, trains, threads = [], [], set()
    for n in (n1, n2):
        wall, recs = cli(
            [f"kb={kb}", "profile=paper", *paper_slice(n), *extra],
            workdir / f"{n}",
        )
        walls.append(wall)
        trains.append(recs[0]["wall_time_s"])
        threads.add(recs[0]["torch_threads"])
    per_step = (trains[1] - trains[0]) / (n2 - n1)
    rate = trains[1] / n2
    startup = walls[1] - trains[1]
    run_s = startup + total * rate
    return {
        "kb": kb,
        "slices": list(steps),
        "torch_threads": sorted(threads),
        "process_wall_s": walls,
        "train_wall_s": trains,
        "ms_per_iteration": 1000 * rate,
        "marginal_ms_per_iteration": 1000 * per_step,
        "startup_s": startup,
        "extrapolated_run_s": run_s,
        "extrapolated_run_min": run_s / 60,
        "total_iterations": total,
    }


def sweep_throughput(
    n_jobs: int,
    jobs: int,
    steps: int,
    workdir: Path,
    kb: str = "same",
    extra: Sequence[str] = (),
) -> dict[str, Any]:
    """One `-m` sweep of `jobs` seeds under the joblib launcher with `n_jobs` workers."""
    seeds = ",".join(str(s) for s in range(jobs))
    overrides = [
        f"kb={kb}",
        "profile=quick",
        f"profile.max_steps={steps}",
        f"profile.eval_every={steps}",
        "hydra/launcher=parallel",
        f"hydra.launcher.n_jobs={n_jobs}",
        f"seed={seeds}",
        *extra,
    ]
    wall, recs = cli(overrides, workdir, multirun=True)
    if len(recs) != jobs or any(r["status"] != "ok" for r in recs):
        raise RuntimeError(f"sweep with n_jobs={n_jobs} did not finish {jobs} ok records")
    return {
        "n_jobs": n_jobs,
        "jobs": jobs,
        "steps_per_job": steps,
        "torch_threads_per_job": sorted({r["torch_threads"] for r in recs}),
        "wall_s": wall,
        "jobs_per_hour": 3600 * jobs / wall,
        "iterations_per_s": jobs * steps / wall,
        "job_train_wall_s": [r["wall_time_s"] for r in recs],
    }


def paper_run_records(folder: Path) -> list[dict[str, Any]]:
    """The ok records of whole paper-profile runs under `folder` (`make paper-run`), with their
    paths relative to the repository."""
    out = []
    for path in sorted(folder.rglob("*.json")) if folder.is_dir() else []:
        record = records.read_record(path)
        if not record or record.get("status") != "ok":
            continue
        if record["config"]["profile"]["name"] != "paper":
            continue
        where = path.resolve()
        rel = where.relative_to(REPO_DIR) if where.is_relative_to(REPO_DIR) else where
        out.append(
            {
                "name": record["name"],
                "experiment": record["experiment"],
                "torch_threads": record["torch_threads"],
                "steps": record["steps"],
                "eval_every": record["config"]["profile"].get("eval_every"),
                "wall_time_s": record["wall_time_s"],
                TEST_ACCURACY: record[TEST_ACCURACY],
                "git_commit": record.get("git_commit"),
                "path": str(rel),
            }
        )
    return out
