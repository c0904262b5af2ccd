"""Sweeps through `hydra/launcher=slurm` on a real SLURM cluster (scripts/slurm_local.sh starts a
single-node one; .ci/run does): a two-job sweep, a job preempted with `scontrol requeue` and a
job warned of its time limit (requeued by submitit), each resumed from its checkpoint to the
numbers of the run left alone. Skipped where no cluster answers, unless
DFL_BENCH_SLURM=required (CI): then they fail."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from jobs import composed

from dfl_bench.lifecycle import train

REPO = Path(__file__).resolve().parents[2]
NUMBERS = ("test_accuracy", "best_test_accuracy", "cons_ratio", "cu_cons", "cu_ant", "steps")


def cluster_answers() -> bool:
    """Whether `sinfo` shows a node that takes jobs within a few seconds."""
    if shutil.which("sinfo") is None:
        return False
    try:
        states = subprocess.run(
            ["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=10
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return False
    return any(s.rstrip("*") in ("idle", "mix", "alloc") for s in states)


UP = cluster_answers()
if not UP and os.environ.get("DFL_BENCH_SLURM") == "required":
    raise RuntimeError("DFL_BENCH_SLURM=required and no SLURM cluster answers (sinfo)")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not UP, reason="no SLURM cluster answers (scripts/slurm_local.sh start)"),
]

# A run long enough to be preempted or warned of its time limit after its first checkpoint:
# 600 steps of the smoke subset (about 15 s), a checkpoint every 2 steps (smoke's cadence).
LONG = [
    "+experiment=same_symmetric",
    "row=product_S",
    "profile=smoke",
    "profile.max_steps=600",
    "profile.eval_every=200",
    "profile.log_every=10",
    "threads=1",
    "logger=none",
    "progress_bar=false",
]
SLURM = [
    "hydra/launcher=slurm",
    "hydra.launcher.cpus_per_task=1",
    "hydra.launcher.mem_gb=1",
]


def sweep(tmp: Path, *overrides: str) -> subprocess.Popen:
    """`python -m dfl_bench -m OVERRIDES` through the SLURM launcher, records under tmp."""
    command = [
        *(sys.executable, "-m", "dfl_bench", "-m", *overrides, *SLURM),
        f"records_dir={tmp / 'records'}",
        f"checkpoint_dir={tmp / 'checkpoints'}",
        f"hydra.sweep.dir={tmp / 'sweep'}",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled"}
    return subprocess.Popen(
        command, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def jobs_of(tmp: Path) -> list[str]:
    """The SLURM job ids the sweep under `tmp` submitted."""
    return sorted({p.name.split("_")[0] for p in (tmp / "sweep").rglob("*_submitted.pkl")})


def running_with_a_checkpoint(proc: subprocess.Popen, tmp: Path) -> str:
    """The sweep's one SLURM job id, once it has written a checkpoint to resume from."""
    deadline = time.monotonic() + 240
    while not list((tmp / "checkpoints").rglob("last.ckpt")):
        assert proc.poll() is None and time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.5)
    (job,) = jobs_of(tmp)
    return job


def release_requeued(proc: subprocess.Popen, stop: threading.Event) -> None:
    """Start a requeued job at once: SLURM holds one for minutes (reason BeginTime), as an
    operator would release it."""
    while proc.poll() is None and not stop.is_set():
        found = subprocess.run(
            ["squeue", "-h", "-o", "%i %r"], capture_output=True, text=True
        ).stdout.split("\n")
        for line in found:
            if line.endswith("BeginTime"):
                job = line.split()[0]
                subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now"])
        time.sleep(1)


def finish(proc: subprocess.Popen, timeout: float = 420) -> str:
    """The sweep's output once it ends (requeued jobs released meanwhile), asserting exit 0."""
    stop = threading.Event()
    helper = threading.Thread(target=release_requeued, args=(proc, stop), daemon=True)
    helper.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out[-4000:]
    return out


def the_record(tmp: Path) -> dict:
    (path,) = (tmp / "records").rglob("*.json")
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> dict:
    """The long run left alone, in this process: what a resumed run must equal."""
    return train.run(*composed(tmp_path_factory.mktemp("alone"), *LONG))


def test_a_two_job_sweep_runs_as_an_array_and_says_once_that_sacct_has_no_answer(tmp_path):
    out = finish(
        sweep(
            tmp_path,
            "+experiment=same_symmetric",
            "row=product_S,godel_S",
            "profile=smoke",
            "logger=none",
            "progress_bar=false",
        )  # fmt: skip
    )
    found = [json.loads(p.read_text()) for p in (tmp_path / "records").rglob("*.json")]
    assert sorted(r["row"] for r in found) == ["godel_S", "product_S"]
    assert all(r["status"] == "ok" for r in found)
    sacct = subprocess.run(["sacct", "-n"], capture_output=True).returncode == 0
    assert out.count("sacct gives no job states") == (0 if sacct else 1)
    assert "Bypassing sacct error" not in out
    assert "[dfl_bench] same_symmetric at profile smoke: 2 row(s)" in out  # the sweep's table
    logs = "".join(p.read_text() for p in (tmp_path / "sweep").rglob("*_log.*"))
    assert "The `srun` command is available" not in logs


@pytest.mark.quiet  # against a clock: not beside the parallel suite (make test runs it after)
def test_a_job_preempted_by_a_requeue_resumes_to_the_numbers_of_the_run_left_alone(tmp_path, alone):
    proc = sweep(tmp_path, *LONG)
    job = running_with_a_checkpoint(proc, tmp_path)
    subprocess.run(["scontrol", "requeue", job], check=True)
    finish(proc)
    record = the_record(tmp_path)
    assert record["status"] == "ok" and record["resumed"] is True
    assert len(record["wall_segments_s"]) >= 2
    assert {k: record[k] for k in NUMBERS} == {k: alone[k] for k in NUMBERS}


@pytest.mark.quiet  # against a clock: not beside the parallel suite (make test runs it after)
def test_a_job_at_its_time_limit_is_requeued_by_submitit_and_resumes(tmp_path, alone):
    """SLURM warns a job of its time limit with the signal the launcher asks for (USR2,
    `--signal=USR2@<signal_delay_s>`); it comes when SLURM's clock says (up to a minute early,
    before the job has even started Python), so the test sends it once the job has a
    checkpoint. With a 2-minute limit submitit counts the signal as the time limit's (it
    guarantees no run under 10 minutes), requeues the job, which resumes from its last
    checkpoint to the numbers of the run left alone."""
    limit = ["hydra.launcher.timeout_min=2", "hydra.launcher.signal_delay_s=10"]
    proc = sweep(tmp_path, *LONG, *limit, "hydra.launcher.max_num_timeout=3")
    job = running_with_a_checkpoint(proc, tmp_path)
    subprocess.run(["scancel", "--signal=USR2", job], check=True)
    finish(proc)
    record = the_record(tmp_path)
    logs = "".join(p.read_text() for p in (tmp_path / "sweep").rglob("*_log.err"))
    assert "this job is timed-out" in logs  # submitit's own word for the time limit's signal
    assert record["status"] == "ok" and record["resumed"] is True
    assert {k: record[k] for k in NUMBERS} == {k: alone[k] for k in NUMBERS}
