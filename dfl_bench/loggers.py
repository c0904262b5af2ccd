"""Experiment loggers (Section 10 metrics go to W&B by default, offline unless logged in)."""

from __future__ import annotations

import math
import netrc
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lightning.pytorch.loggers import CSVLogger, Logger, WandbLogger

LOGGER_KINDS = ("wandb", "csv", "none")
WANDB_MODES = ("auto", "online", "offline", "disabled")
# Run-record fields put in the W&B run summary: a dashboard grouped by experiment then shows a
# table's columns (accuracy, cons%, cu_cons%, cu_ant% of Section 9.1) per row and seed.
SUMMARY_KEYS = (
    "experiment",
    "row",
    "seed",
    "profile",
    "status",
    "reason",
    "test_accuracy",
    "best_test_accuracy",
    "cons_ratio",
    "cu_cons",
    "cu_ant",
)


def wandb_logged_in() -> bool:
    """Whether a W&B API key is available (WANDB_API_KEY or a netrc entry for the W&B host)."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    host = urlparse(os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai")).hostname
    try:
        return netrc.netrc().authenticators(host or "api.wandb.ai") is not None
    except (FileNotFoundError, netrc.NetrcParseError, OSError):
        return False


def wandb_mode(requested: str = "auto") -> str:
    """The W&B mode: WANDB_MODE wins, then `requested`; auto = online if logged in, else offline."""
    if requested not in WANDB_MODES:
        valid = list(WANDB_MODES)
        raise ValueError(f"logger.mode={requested!r} is not valid; choose one of {valid}")
    env = os.environ.get("WANDB_MODE")
    if env:
        return env
    if requested != "auto":
        return requested
    return "online" if wandb_logged_in() else "offline"


def build_logger(
    cfg: Mapping[str, Any],
    *,
    name: str,
    group: str,
    config: Mapping[str, Any],
    save_dir: str | Path,
) -> Logger | None:
    """The Lightning logger `cfg.kind` asks for; W&B gets group/name/config and its own dir."""
    kind = cfg.get("kind")
    if kind not in LOGGER_KINDS:
        raise ValueError(f"logger kind {kind!r} is not valid; choose one of {list(LOGGER_KINDS)}")
    if kind == "none":
        return None
    save_dir = Path(cfg.get("save_dir") or save_dir)
    save_dir.mkdir(parents=True, exist_ok=True)
    if kind == "csv":
        return CSVLogger(save_dir=save_dir, name="", version="csv")
    import wandb

    return WandbLogger(
        project=cfg.get("project", "dfl_bench"),
        entity=cfg.get("entity"),
        group=group,
        name=name,
        tags=list(cfg.get("tags") or []),
        config=dict(config),
        save_dir=str(save_dir),
        mode=wandb_mode(cfg.get("mode", "auto")),
        reinit="finish_previous",
        settings=wandb.Settings(console="off", x_disable_stats=True, silent=True),
    )


def log_dir(logger: Logger | None) -> str | None:
    """Where a logger writes: the W&B run folder, the CSV folder, or None."""
    if isinstance(logger, WandbLogger):
        return str(Path(logger.experiment.dir).parent)
    if logger is not None:
        return logger.log_dir
    return None


def summarize(logger: Logger | None, record: Mapping[str, Any]) -> None:
    """Set SUMMARY_KEYS of the run record in the W&B run summary (a NaN ratio becomes null)."""
    if isinstance(logger, WandbLogger):
        logger.experiment.summary.update({k: _finite(record.get(k)) for k in SUMMARY_KEYS})


def _finite(value: Any) -> Any:
    """`value`, or None for a NaN or infinite float (strict JSON, as in the run record)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def finish(logger: Logger | None, failed: bool) -> None:
    """Close the W&B run cleanly (wandb.finish) so the next job of a sweep starts its own run."""
    if isinstance(logger, WandbLogger):
        import wandb

        if wandb.run is not None:
            wandb.finish(exit_code=1 if failed else 0)
