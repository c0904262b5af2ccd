"""What one run does: the semi-supervised MNIST experiment of Section 9.3 for one configuration.

    python -m dfl_bench                                  # recommended operators, quick profile
    python -m dfl_bench tnorm=product implication=reichenbach
    python -m dfl_bench +experiment=same_symmetric -m    # one paper table, one job per row

Each job (Hydra task function `main`):
  1. resolves and checks the config (guards.py: values, ignored overrides, writable folders; an
     experiment's `row` picks that table row's operators) and builds the operators, so a bad
     configuration fails here, before any data is loaded (a sweep checks all jobs first: sweep.py);
  2. hashes the result-changing part of the config, locks the job (lock.py) and skips it when
     its run record `<records_dir>/<experiment>/<hash>.json` says ok (unless force=true);
  3. trains the Lightning module for `profile.max_steps` steps, saving `last.ckpt` under
     `<checkpoint_dir>/<experiment>/<hash>/` so an interrupted job resumes where it stopped,
     with the same numbers as an uninterrupted run (checkpoint.py);
  4. writes the run record (status ok only after the final evaluation; failed with the reason
     when the loss turned NaN/inf, which ends this job but not the sweep), finishes the W&B run,
     and prints a summary.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn

import hydra
import lightning as L
import torch
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from hydra.utils import to_absolute_path
from lightning.pytorch.loggers import Logger
from lightning.pytorch.utilities.exceptions import SIGTERMException
from omegaconf import DictConfig, OmegaConf

from dfl_bench import checkpoint, guards, loggers, records
from dfl_bench.checkpoint import LastCheckpoint
from dfl_bench.data import MnistDataModule
from dfl_bench.lock import AlreadyRunning, job_lock
from dfl_bench.module import DFLModule, NonFiniteLossError
from dfl_bench.operators import KINDS, OperatorSet
from dfl_bench.provenance import job_provenance

CONFIG_DIR = str(Path(__file__).resolve().parent.parent / "conf")
REPO_DIR = Path(__file__).resolve().parent.parent


EXIT_FAILED, EXIT_INVALID, EXIT_TERMINATED = 1, 2, 143  # 0: every job ok or skipped


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
        config, module = prepared(cfg, hydra_cfg.overrides.task)
    except ValueError as err:
        print(f"[dfl_bench] invalid configuration: {err}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID) from None
    try:
        record = run_prepared(cfg, hydra_cfg, config, module)
    except AlreadyRunning as err:
        fail(f"[dfl_bench] {job_name(hydra_cfg)}: {err}", hydra_cfg)
    if record.get("status") != "ok":
        fail(f"[dfl_bench] {job_name(hydra_cfg)} failed: {record.get('reason')}", hydra_cfg)
    return record.get("test_accuracy")


def fail(message: str, hydra_cfg: DictConfig) -> NoReturn:
    """End a job that did not succeed: exit 1 from a single run; in a sweep, raise JobFailed so
    Hydra records it, runs the remaining jobs, and exits 1 at the end."""
    if hydra_cfg.mode == RunMode.MULTIRUN:
        raise JobFailed(message)
    print(message, file=sys.stderr)
    raise SystemExit(EXIT_FAILED)


def prepared(cfg: DictConfig, overrides: Sequence[str]) -> tuple[dict[str, Any], DFLModule]:
    """The checked config and its module, built after seeding so its weights follow `seed`."""
    guards.check_seed(cfg.seed)
    L.seed_everything(cfg.seed, workers=True, verbose=False)  # before the weights are drawn
    return checked(cfg, overrides)


def run(cfg: DictConfig, hydra_cfg: DictConfig) -> dict[str, Any]:
    """One job, from its composed config: check and build it, then `run_prepared`."""
    return run_prepared(cfg, hydra_cfg, *prepared(cfg, hydra_cfg.overrides.task))


def run_prepared(
    cfg: DictConfig, hydra_cfg: DictConfig, config: dict[str, Any], module: DFLModule
) -> dict[str, Any]:
    """One checked job: lock, skip if done, reuse, else train (resuming), record (module doc)."""
    path, ckpt_dir = job_paths(cfg, config)
    with job_lock(lock_path(ckpt_dir)):
        settled = settled_record(cfg, hydra_cfg, config, path, ckpt_dir)
        if settled is not None:
            return settled
        return fit_and_record(cfg, hydra_cfg, config, module, path, ckpt_dir)


def job_paths(cfg: DictConfig, config: Mapping[str, Any]) -> tuple[Path, Path]:
    """The job's record path and checkpoint folder (both named by its config hash)."""
    digest = records.config_hash(config)
    experiment = config["experiment_name"]
    path = records.record_path(to_absolute_path(cfg.records_dir), experiment, digest)
    return path, Path(to_absolute_path(cfg.checkpoint_dir)) / experiment / digest


def lock_path(ckpt_dir: Path) -> Path:
    """The job's lock file, beside its checkpoint folder."""
    return ckpt_dir.with_name(f"{ckpt_dir.name}.lock")


def settled_record(
    cfg: DictConfig,
    hydra_cfg: DictConfig,
    config: dict[str, Any],
    path: Path,
    ckpt_dir: Path,
) -> dict[str, Any] | None:
    """The record of a (locked) job that need not train: ok already (skipped), or trained by
    another experiment (reused); None when it must train (force=true drops its checkpoint)."""
    experiment = config["experiment_name"]
    if cfg.force:
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    elif records.is_done(path):
        name = job_name(hydra_cfg)
        print(f"[dfl_bench] skipping {name}: {path} says ok (force=true reruns it)")
        return records.read_record(path) or {}
    elif reused := records.reuse_done(
        to_absolute_path(cfg.records_dir),
        path,
        experiment=experiment,
        name=job_name(hydra_cfg),
        row=config.get("row"),
        config=config,
        overrides=list(hydra_cfg.overrides.task),
    ):
        print(summary_text(reused, path))
        return reused
    return None


def fit_and_record(
    cfg: DictConfig,
    hydra_cfg: DictConfig,
    config: dict[str, Any],
    module: DFLModule,
    path: Path,
    ckpt_dir: Path,
) -> dict[str, Any]:
    """Train (resuming from a whole `last.ckpt`), write the record, close the logger, report."""
    experiment, digest = config["experiment_name"], path.stem
    torch.set_num_threads(torch_threads(cfg.threads, hydra_cfg))
    data = MnistDataModule(**config["data"], seed=cfg.seed)
    logger = loggers.build_logger(
        config["logger"],
        name=job_name(hydra_cfg),
        group=experiment,
        config=config,
        save_dir=hydra_cfg.runtime.output_dir,
    )
    trainer = build_trainer(cfg, logger, callbacks(cfg, ckpt_dir))
    last = checkpoint.resumable(ckpt_dir)
    started = now()
    tic = time.perf_counter()
    try:
        trainer.fit(module, datamodule=data, ckpt_path=str(last) if last else None)
        status, reason = final_status(module, cfg.profile.max_steps)
    except NonFiniteLossError as err:
        status, reason = "failed", f"non-finite loss: {err}"
    except SIGTERMException:
        loggers.finish(logger, failed=True)
        terminated(job_name(hydra_cfg), trainer.global_step, ckpt_dir / checkpoint.NAME)
    except BaseException:
        loggers.finish(logger, failed=True)
        raise
    record = records.make_record(
        status=status,
        reason=reason,
        config=config,
        summary=module.summary(),
        experiment=experiment,
        name=job_name(hydra_cfg),
        row=config.get("row"),
        config_hash=digest,
        overrides=list(hydra_cfg.overrides.task),
        data_checksum=data.checksum if data.arrays is not None else None,
        git_commit=records.git_commit(REPO_DIR),
        wall_time_s=round(time.perf_counter() - tic, 3),
        resumed=last is not None,
        started=started,
        finished=now(),
        log_dir=loggers.log_dir(logger),
        torch_threads=torch.get_num_threads(),
    )
    records.write_record(path, records.portable(record, (Path.cwd(), REPO_DIR)))
    shutil.rmtree(ckpt_dir, ignore_errors=True)
    loggers.summarize(logger, record)
    loggers.finish(logger, failed=status != "ok")
    print(summary_text(record, path))
    if trainer.received_sigterm:
        terminated(job_name(hydra_cfg), trainer.global_step, None)
    return record


def final_status(module: DFLModule, max_steps: int) -> tuple[str, str | None]:
    """ok only when the run reached max_steps and evaluated there (never a stale accuracy)."""
    if module.global_step != max_steps or module.evaluated_step != max_steps:
        return "failed", (
            f"no final evaluation: training ended at step {module.global_step}, last evaluated "
            f"at step {module.evaluated_step}, budget {max_steps}"
        )
    return "ok", None


def terminated(name: str, step: int, saved: Path | None) -> NoReturn:
    """Report SIGTERM and exit 143; the sweep's remaining jobs are not run."""
    where = f"checkpoint {saved}" if saved is not None and saved.is_file() else "its record"
    print(
        f"[dfl_bench] {name}: SIGTERM at step {step}; saved {where}. The remaining jobs of this "
        "sweep were not run: rerun the same command to resume (finished jobs are skipped).",
        file=sys.stderr,
    )
    raise SystemExit(EXIT_TERMINATED)


def checked(cfg: DictConfig, overrides: Sequence[str] = ()) -> tuple[dict[str, Any], DFLModule]:
    """The resolved config and its module: a bad configuration raises ValueError here, before
    any data is loaded (values, ignored overrides, folders, operators, rows, optimizer)."""
    guards.check_overrides(cfg, overrides)
    config = resolved_config(cfg)
    guards.check_config(config)
    guards.check_writable(to_absolute_path(cfg.records_dir), "records_dir")
    guards.check_writable(to_absolute_path(cfg.checkpoint_dir), "checkpoint_dir")
    check_trainer(cfg)
    loggers.check(config["logger"])
    operators = OperatorSet.from_config({kind: config[kind] for kind in KINDS})
    return config, build_module(config, operators)


def resolved_config(cfg: DictConfig) -> dict[str, Any]:
    """The job's config as plain data, its table row (if any) checked and interpolated in, and
    its `provenance` (the experiment's, updated by its row's; `dfl_bench.provenance`)."""
    rows = cfg.get("rows") or {}
    if rows and cfg.get("row") not in rows:
        raise ValueError(
            f"row={cfg.get('row')!r} is not a row of experiment {cfg.experiment_name!r}; "
            f"valid rows: {list(rows)}"
        )
    config = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    assert isinstance(config, dict)
    config.pop("rows", None)
    config.pop("families", None)
    row_provenance = config.pop("row_provenance", None)
    config["provenance"] = job_provenance(
        config.get("provenance"), row_provenance, config.get("row"), config
    )
    return config


def build_module(config: Mapping[str, Any], operators: OperatorSet) -> DFLModule:
    """The LightningModule of Section 9.3 for this problem, operators, optimizer and budget."""
    problem, profile = config["problem"], config["profile"]
    return DFLModule(
        problem=problem["name"],
        operators=operators,
        w_dfl=problem["w_dfl"],
        optimizer=config["optimizer"],
        kb=problem["kb"],
        ntn_k=config["model"]["ntn_k"],
        ntn_bias=config["model"]["ntn_bias"],
        log_every=profile["log_every"],
        eval_every=profile["eval_every"],
        metrics_tail=profile["metrics_tail"],
        max_steps=profile["max_steps"],
        seed=config["seed"],
    )


def trainer_settings(cfg: DictConfig) -> dict[str, Any]:
    """The Trainer arguments a job fixes: the step budget, logging cadence, our callbacks and
    checkpoint, no validation loop (the module evaluates on the test set itself)."""
    return {
        "max_steps": cfg.profile.max_steps,
        "max_epochs": -1,
        "log_every_n_steps": cfg.profile.log_every,
        "enable_checkpointing": False,
        "enable_progress_bar": cfg.progress_bar,
        "enable_model_summary": False,
        "num_sanity_val_steps": 0,
        "limit_val_batches": 0,
    }


def check_trainer(cfg: DictConfig) -> None:
    """conf/trainer passes any Trainer argument except those the job sets itself."""
    owned = sorted({*trainer_settings(cfg), "logger", "callbacks"} & set(cfg.trainer))
    if owned:
        raise ValueError(
            f"trainer.{owned[0]} is set by the job (profile, progress_bar, logger); conf/trainer "
            "may set any other lightning.Trainer argument"
        )


def build_trainer(cfg: DictConfig, logger: Logger | None, hooks: list[L.Callback]) -> L.Trainer:
    """A Trainer with conf/trainer's arguments passed through plus the job's own settings."""
    passed = OmegaConf.to_container(cfg.trainer, resolve=True)
    assert isinstance(passed, dict)
    return L.Trainer(**passed, **trainer_settings(cfg), logger=logger or False, callbacks=hooks)


def callbacks(cfg: DictConfig, ckpt_dir: Path) -> list[L.Callback]:
    """The resumable checkpoint and, for tests, the debug hooks: `debug.nan_at_step`
    and `+debug.sigterm_at_step` (not in config.yaml, so it changes no config hash)."""
    out: list[L.Callback] = [LastCheckpoint(ckpt_dir, cfg.profile.checkpoint_every)]
    if cfg.debug.nan_at_step is not None:
        out.append(PoisonWeights(cfg.debug.nan_at_step))
    if cfg.debug.get("sigterm_at_step") is not None:
        out.append(SigtermAt(cfg.debug.sigterm_at_step))
    return out


class PoisonWeights(L.Callback):
    """Debug: fill the first weight with NaN before step `step`, so that step's loss is NaN."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, *args) -> None:
        if trainer.global_step == self.step:
            with torch.no_grad():
                next(pl_module.parameters()).fill_(float("nan"))


class SigtermAt(L.Callback):
    """Debug: send this process SIGTERM during step `step`, as `timeout` or SLURM would."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_start(self, trainer: L.Trainer, *args) -> None:
        if trainer.global_step + 1 == self.step:
            os.kill(os.getpid(), signal.SIGTERM)


def torch_threads(requested: int | None, hydra_cfg: DictConfig) -> int:
    """Torch threads per job: `requested`, else the launcher's share of the cores (joblib:
    cores // n_jobs; submitit: cpus_per_task), else 1: the small net gains little from more,
    and on a busy CPU several threads per process run many times slower."""
    if requested is not None:
        return int(requested)
    launcher = hydra_cfg.launcher
    if launcher.get("cpus_per_task") is not None:
        return int(launcher.cpus_per_task)
    n_jobs = launcher.get("n_jobs")
    if n_jobs is None:
        return 1
    cores = os.cpu_count() or 1
    n_jobs = cores if n_jobs < 0 else n_jobs
    return max(1, cores // n_jobs)


def job_name(hydra_cfg: DictConfig) -> str:
    """The job's overrides (Hydra's override_dirname), or 'default' when there are none."""
    return hydra_cfg.job.override_dirname or "default"


def now() -> str:
    """The current UTC time in ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def summary_text(record: Mapping[str, Any], path: Path) -> str:
    """The closing lines of a run: accuracy and the gradient ratios of Section 9.1, as percent."""

    def pct(key: str) -> str:
        value = record.get(key)
        return "n/a" if value is None else f"{100 * value:.1f}%"

    status = record["status"] + (f" ({record['reason']})" if record["reason"] else "")
    if record.get("reused_from"):
        status += f" (reused from {record['reused_from']}, not retrained)"
    lines = [
        f"[dfl_bench] {record['experiment']} [{record['name']}] {status}",
        f"  test accuracy {pct('test_accuracy')} (best {pct('best_test_accuracy')})  "
        f"cons {pct('cons_ratio')}  cu_cons {pct('cu_cons')}  cu_ant {pct('cu_ant')}  "
        f"steps {record['steps']}  wall {record['wall_time_s']:.0f}s",
        f"  record: {path}",
    ]
    if record.get("log_dir"):
        lines.append(f"  logs: {record['log_dir']}")
    return "\n".join(lines)
