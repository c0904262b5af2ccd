"""What one run does: the semi-supervised MNIST experiment of Section 9.3 for one configuration.

    python -m dfl_bench                                  # recommended operators, quick profile
    python -m dfl_bench tnorm=product implication=reichenbach
    python -m dfl_bench +experiment=same_symmetric -m    # one paper table, one job per row

Each job (Hydra task function `main`):
  1. resolves the config (an experiment's `row` picks that table row's operators) and builds
     the operators, so a bad operator or parameter fails here, before any data is loaded;
  2. hashes the result-changing part of the config and skips the job when its run record
     `<records_dir>/<experiment>/<hash>.json` says ok (unless force=true);
  3. trains the Lightning module for `profile.max_steps` steps, saving `last.ckpt` under
     `<checkpoint_dir>/<experiment>/<hash>/` so an interrupted job resumes where it stopped;
  4. writes the run record (status ok, or failed with the reason when the loss turned NaN/inf,
     which ends this job but not the sweep), finishes the W&B run, and prints a summary.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import hydra
import lightning as L
import torch
from hydra.core.hydra_config import HydraConfig
from hydra.utils import to_absolute_path
from lightning.pytorch.loggers import Logger
from omegaconf import DictConfig, OmegaConf

from dfl_bench import loggers, records
from dfl_bench.data import MnistDataModule
from dfl_bench.module import DFLModule, NonFiniteLossError
from dfl_bench.operators import KINDS, OperatorSet

CONFIG_DIR = str(Path(__file__).resolve().parent.parent / "conf")
REPO_DIR = Path(__file__).resolve().parent.parent


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="config")
def main(cfg: DictConfig) -> float | None:
    """Hydra task function: train one configuration; returns its test accuracy (None if failed)."""
    try:
        checked(cfg)
    except ValueError as err:
        raise SystemExit(f"[dfl_bench] invalid configuration: {err}") from None
    return run(cfg, HydraConfig.get()).get("test_accuracy")


def run(cfg: DictConfig, hydra_cfg: DictConfig) -> dict[str, Any]:
    """One job: validate, skip if done, train (resuming), record, report (see the module doc)."""
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    config, module = checked(cfg)
    digest = records.config_hash(config)
    experiment = config["experiment_name"]
    path = records.record_path(to_absolute_path(cfg.records_dir), experiment, digest)
    ckpt_dir = Path(to_absolute_path(cfg.checkpoint_dir)) / experiment / digest
    if cfg.force:
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    elif records.is_done(path):
        print(f"[dfl_bench] skipping {job_name(hydra_cfg)}: {path} says ok (force=true reruns it)")
        return records.read_record(path) or {}

    torch.set_num_threads(torch_threads(cfg.threads, hydra_cfg))
    data = MnistDataModule(**config["data"], seed=cfg.seed)
    logger = loggers.build_logger(
        cfg.logger,
        name=job_name(hydra_cfg),
        group=experiment,
        config=config,
        save_dir=hydra_cfg.runtime.output_dir,
    )
    trainer = build_trainer(cfg, logger, callbacks(cfg, ckpt_dir))
    last = ckpt_dir / LastCheckpoint.NAME
    resumed = last.is_file()
    started = now()
    tic = time.perf_counter()
    try:
        trainer.fit(module, datamodule=data, ckpt_path=str(last) if resumed else None)
        status, reason = "ok", None
    except NonFiniteLossError as err:
        status, reason = "failed", f"non-finite loss: {err}"
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
        resumed=resumed,
        started=started,
        finished=now(),
        log_dir=loggers.log_dir(logger),
        torch_threads=torch.get_num_threads(),
    )
    records.write_record(path, record)
    shutil.rmtree(ckpt_dir, ignore_errors=True)
    loggers.summarize(logger, record)
    loggers.finish(logger, failed=status != "ok")
    print(summary_text(record, path))
    return record


def checked(cfg: DictConfig) -> tuple[dict[str, Any], DFLModule]:
    """The resolved config and its module: a bad configuration raises ValueError here, before
    any data is loaded (operators, parameters, rows, problem, formulas, optimizer)."""
    config = resolved_config(cfg)
    operators = OperatorSet.from_config({kind: config[kind] for kind in KINDS})
    return config, build_module(config, operators)


def resolved_config(cfg: DictConfig) -> dict[str, Any]:
    """The job's config as plain data, its table row (if any) checked and interpolated in."""
    rows = cfg.get("rows") or {}
    if rows and cfg.get("row") not in rows:
        raise ValueError(
            f"row={cfg.get('row')!r} is not a row of experiment {cfg.experiment_name!r}; "
            f"valid rows: {list(rows)}"
        )
    config = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    assert isinstance(config, dict)
    config.pop("rows", None)
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
        log_every=profile["log_every"],
        eval_every=profile["eval_every"],
        metrics_tail=profile["metrics_tail"],
        max_steps=profile["max_steps"],
    )


def build_trainer(cfg: DictConfig, logger: Logger | None, hooks: list[L.Callback]) -> L.Trainer:
    """A step-budgeted Trainer: no validation loop (the module evaluates on the test set itself)."""
    return L.Trainer(
        accelerator=cfg.trainer.accelerator,
        devices=cfg.trainer.devices,
        precision=cfg.trainer.precision,
        deterministic=cfg.trainer.deterministic,
        max_steps=cfg.profile.max_steps,
        max_epochs=-1,
        logger=logger or False,
        log_every_n_steps=cfg.profile.log_every,
        callbacks=hooks,
        enable_checkpointing=False,
        enable_progress_bar=cfg.progress_bar,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        limit_val_batches=0,
    )


def callbacks(cfg: DictConfig, ckpt_dir: Path) -> list[L.Callback]:
    """The resumable checkpoint and, for tests, the forced-NaN hook (`debug.nan_at_step`)."""
    out: list[L.Callback] = [LastCheckpoint(ckpt_dir, cfg.profile.checkpoint_every)]
    if cfg.debug.nan_at_step is not None:
        out.append(PoisonWeights(cfg.debug.nan_at_step))
    return out


class LastCheckpoint(L.Callback):
    """Save `last.ckpt` every `every` steps, atomically (tmp + os.replace), for resuming."""

    NAME = "last.ckpt"

    def __init__(self, folder: Path, every: int) -> None:
        self.path, self.every = folder / self.NAME, every

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        if self.every > 0 and trainer.global_step % self.every == 0:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.NAME}.tmp")
            trainer.save_checkpoint(tmp, weights_only=False)
            os.replace(tmp, self.path)


class PoisonWeights(L.Callback):
    """Debug: fill the first weight with NaN before step `step`, so that step's loss is NaN."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, *args) -> None:
        if trainer.global_step == self.step:
            with torch.no_grad():
                next(pl_module.parameters()).fill_(float("nan"))


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

    lines = [
        f"[dfl_bench] {record['experiment']} [{record['name']}] {record['status']}"
        + (f" ({record['reason']})" if record["reason"] else ""),
        f"  test accuracy {pct('test_accuracy')} (best {pct('best_test_accuracy')})  "
        f"cons {pct('cons_ratio')}  cu_cons {pct('cu_cons')}  cu_ant {pct('cu_ant')}  "
        f"steps {record['steps']}  wall {record['wall_time_s']:.0f}s",
        f"  record: {path}",
    ]
    if record.get("log_dir"):
        lines.append(f"  logs: {record['log_dir']}")
    return "\n".join(lines)
