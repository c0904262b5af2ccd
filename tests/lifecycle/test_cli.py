"""The Hydra CLI end to end: a smoke sweep with W&B offline writes one record and one
W&B run per job, a forced NaN fails only its job, a rerun skips finished jobs, a seed repeats its
metrics, an interrupted job resumes from its checkpoint, and bad operators fail before training."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from pathlib import Path

import pytest
import warm_cli
from hydra.core.hydra_config import HydraConfig
from jobs import built_data, composed, rows_experiment
from omegaconf import OmegaConf
from wandb_offline import history as wandb_history
from wandb_offline import summary as wandb_summary

from dfl_bench import schema
from dfl_bench.lifecycle import console, job, loggers, origin, train, trainer
from dfl_bench.lifecycle.records import RECORD_FIELDS

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
METRICS = ("test_accuracy", "best_test_accuracy", "cons_ratio", "cu_cons", "cu_ant")


def cli(tmp: Path, *args: str, silent: bool = True) -> subprocess.CompletedProcess:
    """`python -m dfl_bench ARGS` in `tmp`, smoke profile, W&B offline (`WANDB_SILENT` unless
    `silent` is false), records under tmp."""
    env = {**os.environ, "WANDB_MODE": "offline", "PYTHONPATH": str(REPO)}
    env = (
        {**env, "WANDB_SILENT": "true"}
        if silent
        else {k: v for k, v in env.items() if k != "WANDB_SILENT"}
    )
    command = [
        "profile=smoke",
        f"records_dir={tmp / 'records'}",
        f"checkpoint_dir={tmp / 'checkpoints'}",
        "progress_bar=false",
        "threads=1",
        *args,
    ]
    return warm_cli.run(command, tmp, env)


def load_records(tmp: Path) -> dict[str, dict]:
    """The run records of the test experiment, by row."""
    paths = (tmp / "records" / "cli_test").glob("*.json")
    return {r["row"]: r for r in (json.loads(p.read_text()) for p in paths)}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """The test sweep run twice: (tmp, first run, records after it, second run)."""
    tmp = tmp_path_factory.mktemp("cli")
    args = (rows_experiment(tmp, "cli_test"), "+experiment=cli_test", "-m")
    first = cli(tmp, *args)
    assert first.returncode == 1, first.stderr[-3000:]  # the poisoned job failed
    records = load_records(tmp)
    second = cli(tmp, *args)
    assert second.returncode == 1, second.stderr[-3000:]
    return tmp, first, records, second


def test_sweep_writes_one_complete_record_per_job(sweep):
    tmp, _, records, _ = sweep
    assert sorted(records) == ["godel", "poisoned", "product"]
    for record in records.values():
        assert set(RECORD_FIELDS) <= set(record)
        assert [k for k in record if not schema.named(k)] == []  # every field named once
        assert record["profile"] == "smoke" and record["seed"] == 0
        assert re.fullmatch(r"[0-9a-f]{16}", record["data_checksum"])
        assert record["machine"] == origin.machine()  # where it trained (CPU, torch)
        assert record["config"]["tnorm"]["name"] == record["row"].replace("poisoned", "product")
    for row in ("product", "godel"):
        ok = records[row]
        assert (ok["status"], ok["reason"], ok["steps"]) == ("ok", None, 4)
        assert all(0.0 <= ok[k] <= 1.0 for k in METRICS)
        assert ok["cons_magnitude"] >= 0 and ok["ant_magnitude"] >= 0
    assert not any((tmp / "checkpoints").rglob("*.ckpt"))


def test_forced_nan_fails_its_job_only(sweep):
    _, _, records, _ = sweep
    failed = records["poisoned"]
    assert failed["status"] == "failed"
    assert "not finite" in failed["reason"] and "step 3" in failed["reason"]
    assert [records[r]["status"] for r in ("product", "godel")] == ["ok", "ok"]


def test_each_job_has_its_own_offline_wandb_run_with_metrics(sweep):
    tmp, _, records, _ = sweep
    dirs = {r["row"]: tmp / r["log_dir"] for r in records.values()}
    assert not any(Path(r["log_dir"]).is_absolute() for r in records.values())
    assert len(set(dirs.values())) == 3
    for row in ("product", "godel"):
        assert dirs[row].name.startswith("offline-run-")
        history = wandb_history(dirs[row])
        accuracy = [h["test/accuracy"] for h in history if "test/accuracy" in h]
        assert accuracy[-1] == pytest.approx(records[row]["test_accuracy"])
        assert any("loss/total" in h and "metrics/cons_ratio" in h for h in history)


def test_wandb_summary_carries_the_records_final_fields(sweep):
    tmp, _, records, _ = sweep
    for record in records.values():
        summary = wandb_summary(tmp / record["log_dir"], wait_for=loggers.SUMMARY_KEYS)
        for key in loggers.SUMMARY_KEYS:
            value = record[key]
            if isinstance(value, float):
                value = pytest.approx(value) if math.isfinite(value) else None
            assert summary[key] == value, key
    poisoned = wandb_summary(tmp / records["poisoned"]["log_dir"], wait_for=["status"])
    assert poisoned["status"] == "failed"
    assert wandb_summary(tmp / records["godel"]["log_dir"], wait_for=["row"])["row"] == "godel"


def test_summary_is_printed(sweep):
    _, first, records, _ = sweep
    assert re.search(r"\[dfl_bench\] cli_test \[[^]]*row=product\] ok\n", first.stdout)
    assert re.search(r"\[dfl_bench\] cli_test \[[^]]*row=godel\] ok\n", first.stdout)
    assert re.search(r"cli_test \[[^]]*row=poisoned\] failed \(non-finite loss", first.stdout)
    accuracy = f"test accuracy {100 * records['product']['test_accuracy']:.1f}%"
    assert accuracy in first.stdout
    assert "cons " in first.stdout and "cu_cons " in first.stdout and "cu_ant " in first.stdout
    assert str(Path("records") / "cli_test") in first.stdout


def test_a_failed_job_ends_the_sweep_in_one_line_not_a_traceback(sweep):
    _, first, _, _ = sweep
    assert "Traceback" not in first.stderr and "Error executing job" not in first.stderr
    assert first.stderr.rstrip().endswith(
        "1 of 3 jobs failed (each record says why); rerunning the command retrains only those"
    )


LIBRARY_NOISE = (
    "GPU available",
    "TPU available",
    "litlogger",
    "The anonymous setting has no effect",
    "`Trainer.fit` stopped",
    "Seed set to",
    "srun",
)


@pytest.mark.parametrize("logger", ["none", "wandb"])
def test_a_run_shows_one_bar_over_its_steps_and_no_library_noise(tmp_path, logger, monkeypatch):
    bin_dir = tmp_path / "bin"  # an `srun` on PATH, as on a cluster's login node
    bin_dir.mkdir()
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    run = cli(
        tmp_path, "progress_bar=true", f"logger={logger}", "profile.max_steps=60", silent=False
    )
    assert run.returncode == 0, run.stderr[-3000:]
    # a pipe, not a terminal: a line every few percent, none with a carriage return
    assert "[dfl_bench] step 60/60 (100%)" in run.stdout and "\r" not in run.stdout
    assert run.stdout.count("[dfl_bench] step ") == 20  # every 5% of 60 steps
    assert "Epoch" not in run.stdout  # 60 steps are two passes over the smoke subset
    shown = run.stdout + run.stderr
    assert not any(re.search(pattern, shown) for pattern, _ in console.KNOWN_WARNINGS)
    assert [line for line in LIBRARY_NOISE if line in shown] == []
    lines = [line for line in shown.replace("\r", "\n").splitlines() if line.strip()]
    assert all(line.startswith(("Training", "[dfl_bench]", "  ")) for line in lines), lines


def test_rerun_skips_finished_jobs(sweep):
    tmp, _, before, second = sweep
    assert second.stdout.count("[dfl_bench] skipping") == 2
    after = load_records(tmp)
    for row in ("product", "godel"):
        assert after[row]["finished"] == before[row]["finished"]
    assert after["poisoned"]["status"] == "failed"


def test_same_seed_gives_the_same_metrics(tmp_path):
    first = train.run(*composed(tmp_path, "seed=3"))
    second = train.run(*composed(tmp_path, "seed=3", "force=true"))
    assert first["finished"] <= second["started"]
    for key in (*METRICS, "cons_magnitude", "ant_magnitude", "steps"):
        assert second[key] == pytest.approx(first[key], rel=1e-6), key


def test_evaluation_cadence_leaves_the_records_training_numbers_alone(tmp_path):
    every, other = (
        train.run(*composed(tmp_path, f"profile.eval_every={n}", "seed=2")) for n in (1, 2)
    )
    assert every["config_hash"] != other["config_hash"]  # the cadence changes best: hashed
    for key in ("test_accuracy", "cons_ratio", "cu_cons", "cu_ant", "cons_magnitude", "steps"):
        assert every[key] == other[key], key
    assert every["best_test_accuracy"] >= other["best_test_accuracy"] >= other["test_accuracy"]


class Crash(train.L.Callback):
    """Kill the training loop at a step, as an interruption would."""

    def on_train_batch_start(self, trainer, *args):
        if trainer.global_step == 3:
            raise RuntimeError("killed")


def test_interrupted_job_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    build = job.callbacks
    monkeypatch.setattr(job, "callbacks", lambda cfg, d: [*build(cfg, d), Crash()])
    with pytest.raises(RuntimeError, match="killed"):
        train.run(*composed(tmp_path))
    assert len(list((tmp_path / "checkpoints").rglob("last.ckpt"))) == 1
    assert not list((tmp_path / "records").rglob("*.json"))
    monkeypatch.setattr(job, "callbacks", build)
    record = train.run(*composed(tmp_path))
    assert (record["status"], record["resumed"], record["steps"]) == ("ok", True, 4)
    assert not list((tmp_path / "checkpoints").rglob("last.ckpt"))


def test_bad_parameter_fails_before_training(tmp_path, monkeypatch, capsys):
    def no_data(*args, **kwargs):
        raise AssertionError("data loaded before the operators were checked")

    monkeypatch.setattr(job, "_built", no_data)  # what builds the data and the training module
    with pytest.raises(ValueError, match=r"p=-1.*must be a number in \(0, inf\)"):
        train.run(*composed(tmp_path, "tnorm.p=-1"))
    with pytest.raises(ValueError, match=r"valid rows: \['godel_S'"):
        train.run(*composed(tmp_path, "+experiment=same_symmetric", "row=nope"))
    cfg, hydra_cfg = composed(tmp_path, "optimizer.name=adamw")
    HydraConfig.instance().set_config(OmegaConf.create({"hydra": hydra_cfg}))
    with pytest.raises(SystemExit) as exit_:
        train.main(cfg)
    assert exit_.value.code == train.EXIT_INVALID
    assert re.search(r"invalid configuration: .*valid choices: \['adam'", capsys.readouterr().err)


def test_a_job_builds_its_data_module_once_from_its_check_to_its_record(tmp_path, monkeypatch):
    built = built_data(monkeypatch)
    record = train.run(*composed(tmp_path))
    assert record["status"] == "ok" and record["data_checksum"] == built[0].checksum
    assert len(built) == 1


@pytest.mark.parametrize(("requested", "n_jobs", "expected"), [(3, 2, 3), (None, None, 1)])
def test_torch_threads_explicit_or_one(requested, n_jobs, expected):
    launcher = OmegaConf.create({} if n_jobs is None else {"n_jobs": n_jobs})
    assert trainer.torch_threads(requested, OmegaConf.create({"launcher": launcher})) == expected


def test_torch_threads_split_the_cores_between_joblib_jobs():
    cores = os.cpu_count() or 1
    hydra_cfg = OmegaConf.create({"launcher": {"n_jobs": 2}})
    assert trainer.torch_threads(None, hydra_cfg) == max(1, cores // 2)
    assert trainer.torch_threads(None, OmegaConf.create({"launcher": {"n_jobs": -1}})) == 1


def test_torch_threads_follow_the_slurm_cpus_per_task():
    hydra_cfg = OmegaConf.create({"launcher": {"cpus_per_task": 4, "nodes": 1}})
    assert trainer.torch_threads(None, hydra_cfg) == 4


def test_a_configuration_of_two_tables_trains_once(tmp_path, monkeypatch, capsys):
    """s = 9 of sigmoidal_s is b0 = -1/2 of sigmoidal_b0: the second job copies the record."""
    first = train.run(*composed(tmp_path, "+experiment=sigmoidal_s", "implication.s=9.0"))
    assert first["status"] == "ok" and "reused_from" not in first

    def no_data(*args, **kwargs):
        raise AssertionError("a reused configuration must not train")

    monkeypatch.setattr(job, "_built", no_data)  # what builds the data and the training module
    second = train.run(*composed(tmp_path, "+experiment=sigmoidal_b0", "implication.b0=-0.5"))
    assert second["reused_from"] == f"sigmoidal_s/{first['config_hash']}.json"
    assert (second["experiment"], second["row"]) == ("sigmoidal_b0", "b0=-0.5")
    assert second["config"]["experiment_name"] == "sigmoidal_b0"
    assert second["test_accuracy"] == first["test_accuracy"]
    assert "reused from sigmoidal_s/" in capsys.readouterr().out
    path = tmp_path / "records" / "sigmoidal_b0" / f"{first['config_hash']}.json"
    assert json.loads(path.read_text())["reused_from"] == second["reused_from"]
