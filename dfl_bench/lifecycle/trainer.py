"""The Lightning Trainer of a job: conf/trainer's arguments passed through, the settings a job
fixes itself (budget, logging cadence, no validation loop), its callbacks and torch threads."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.accelerators import MPSAccelerator
from omegaconf import DictConfig, OmegaConf

from dfl_bench.lifecycle import console
from dfl_bench.lifecycle.checkpoint import LastCheckpoint
from dfl_bench.lifecycle.trainer_values import ACCELERATORS, FIXED, FROM_CONFIG, check_precision


def trainer_settings(cfg: DictConfig) -> dict[str, Any]:
    """The Trainer arguments a job fixes (trainer_values.FIXED) and those it takes from `cfg`
    (trainer_values.FROM_CONFIG: the step budget, logging cadence, progress bar)."""
    return {**FIXED, **{key: OmegaConf.select(cfg, at) for key, at in FROM_CONFIG.items()}}


GPU_ONLY = ("cuda_graph", "compile_dfl")  # job flags that act on a CUDA device only


def check_device(cfg: DictConfig) -> None:
    """The Trainer's accelerator one this machine has (`here`) and its precision one the job
    trains as named there (trainer_values.check_precision; "auto" on a machine with no other
    device is the CPU); its arguments otherwise: trainer_values.check_trainer, which
    guards.check_config applies."""
    accelerator, available = str(cfg.trainer.accelerator), here()
    if accelerator not in available:
        device = "CUDA GPU" if accelerator in ("gpu", "cuda") else f"{accelerator.upper()} device"
        raise ValueError(
            f"trainer.accelerator={accelerator}: this machine has no {device} "
            f"(torch {torch.__version__}); valid choices here: {available}"
        )
    only_cpu = accelerator == "auto" and available == ["auto", "cpu"]
    check_precision(cfg.trainer.precision, "cpu" if only_cpu else accelerator)


def here() -> list[str]:
    """The accelerators of trainer_values.ACCELERATORS this machine has: auto and cpu always,
    cuda with a CUDA device, mps with Apple's, gpu with either (Lightning's choice)."""
    has = {"cuda": torch.cuda.is_available(), "mps": MPSAccelerator.is_available()}
    has["gpu"] = has["cuda"] or has["mps"]
    return [a for a in ACCELERATORS if has.get(a, True)]


def effective_flags(config: dict[str, Any], cfg: DictConfig, overrides: list[str]) -> None:
    """Record the GPU_ONLY flags as off where the job does not train on CUDA, with a note when
    the command line set one (it is ignored, never recorded as used)."""
    if uses_cuda(cfg):
        return
    for flag in GPU_ONLY:
        if config.get(flag):
            if any(o.split("=", 1)[0].lstrip("+") == flag for o in overrides):
                print(f"[dfl_bench] note: {flag}=true is ignored on the CPU", file=sys.stderr)
            config[flag] = False


def build_trainer(cfg: DictConfig, hooks: list[L.Callback]) -> L.Trainer:
    """A Trainer with conf/trainer's arguments passed through plus the job's own settings, its
    progress bar counting the run's steps and Lightning's known warnings quiet (console.py); the
    runs' loggers are the RunsModule's, not the Trainer's."""
    passed = OmegaConf.to_container(cfg.trainer, resolve=True)
    assert isinstance(passed, dict)
    console.quiet_known_warnings()
    if cfg.progress_bar:
        hooks = [*hooks, console.progress()]
    return L.Trainer(**passed, **trainer_settings(cfg), logger=False, callbacks=hooks)


def callbacks(cfg: DictConfig, ckpt_dir: Path) -> list[L.Callback]:
    """The resumable checkpoint and, for tests, the debug signals `+debug.sigterm_at_step` /
    `+debug.sigint_at_step` (they change the config hash, so a test's interrupted job and its
    uninterrupted twin in one sweep each have a record; `debug.nan_at_step` is the
    RunsModule's)."""
    out: list[L.Callback] = [LastCheckpoint(ckpt_dir, cfg.profile.checkpoint_every)]
    if cfg.debug.get("sigterm_at_step") is not None:
        out.append(SignalAt(cfg.debug.sigterm_at_step, signal.SIGTERM))
    if cfg.debug.get("sigint_at_step") is not None:
        out.append(SignalAt(cfg.debug.sigint_at_step, signal.SIGINT))
    return out


class SignalAt(L.Callback):
    """Debug: send this process `signum` during step `step`, as `timeout`, SLURM or Ctrl-C
    would."""

    def __init__(self, step: int, signum: int) -> None:
        self.step, self.signum = step, signum

    def on_train_batch_start(self, trainer: L.Trainer, *args) -> None:
        if trainer.global_step + 1 == self.step:
            os.kill(os.getpid(), self.signum)


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


def uses_cuda(cfg: DictConfig) -> bool:
    """Whether the job's Trainer trains on a CUDA device (conf/trainer's accelerator)."""
    accelerator = str(cfg.trainer.get("accelerator", "auto"))
    return accelerator in ("gpu", "cuda") or (accelerator == "auto" and torch.cuda.is_available())
