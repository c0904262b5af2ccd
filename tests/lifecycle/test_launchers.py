"""Launchers for sweeps: the SLURM presets are one job per run with resources set, the joblib
preset splits the cores between jobs, and a smoke sweep through submitit_local (the code path
of submitit_slurm, run on this machine) writes one ok record per job."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from dfl_bench.lifecycle import trainer
from dfl_bench.paths import CONFIG_DIR

REPO = Path(__file__).resolve().parents[2]
SUBMITIT = "hydra_plugins.hydra_submitit_launcher.submitit_launcher"


def launcher(name: str):
    """The composed `hydra.launcher` node of `hydra/launcher=<name>`."""
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose("config", overrides=[f"hydra/launcher={name}"], return_hydra_config=True)
    return cfg.hydra.launcher


@pytest.mark.parametrize(("name", "gpus"), [("slurm", 0), ("slurm_gpu", 1)])
def test_slurm_presets_request_one_task_per_run_with_resources(name, gpus):
    node = launcher(name)
    assert node._target_ == f"{SUBMITIT}.SlurmLauncher"
    assert node.nodes == 1 and node.tasks_per_node == 1
    assert node.cpus_per_task >= 1 and node.mem_gb >= 1 and node.timeout_min >= 60
    assert node.gpus_per_node == gpus


def test_local_preset_mirrors_slurm_resources():
    local, slurm = launcher("local"), launcher("slurm")
    assert local._target_ == f"{SUBMITIT}.LocalLauncher"
    for key in ("nodes", "tasks_per_node", "timeout_min"):
        assert local[key] == slurm[key]


def test_parallel_preset_is_joblib_with_threads_split():
    node = launcher("parallel")
    assert node._target_.endswith("JoblibLauncher")
    cores = os.cpu_count() or 1
    threads = trainer.torch_threads(None, OmegaConf.create({"launcher": node}))
    assert threads == max(1, cores // node.n_jobs)
    assert threads * min(node.n_jobs, cores) <= cores


def sweep(tmp: Path, *args: str) -> list[dict]:
    """A two-seed smoke sweep `python -m dfl_bench -m ARGS`; the records it wrote."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled"}
    command = [
        sys.executable,
        "-m",
        "dfl_bench",
        "-m",
        "profile=smoke",
        "seed=0,1",
        "logger=none",
        "progress_bar=false",
        f"records_dir={tmp / 'records'}",
        f"checkpoint_dir={tmp / 'checkpoints'}",
        f"hydra.sweep.dir={tmp / 'sweep'}",
        *args,
    ]
    done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(p.read_text()) for p in sorted((tmp / "records").rglob("*.json"))]


@pytest.mark.slow
def test_submitit_local_smoke_sweep_writes_one_ok_record_per_job(tmp_path):
    recs = sweep(tmp_path, "hydra/launcher=local", "hydra.launcher.timeout_min=10")
    assert sorted(r["config"]["seed"] for r in recs) == [0, 1]
    assert all(r["status"] == "ok" for r in recs)
    assert all(r["steps"] == r["config"]["profile"]["max_steps"] for r in recs)
    assert list((tmp_path / "sweep").glob(".submitit/*/*_result.pkl"))


@pytest.mark.slow
def test_joblib_sweep_runs_jobs_with_cores_split(tmp_path):
    recs = sweep(tmp_path, "hydra/launcher=parallel", "hydra.launcher.n_jobs=2")
    assert sorted(r["config"]["seed"] for r in recs) == [0, 1]
    assert all(r["status"] == "ok" for r in recs)
    assert {r["torch_threads"] for r in recs} == {max(1, (os.cpu_count() or 1) // 2)}
