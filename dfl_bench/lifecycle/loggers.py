"""Experiment loggers (Section 10 metrics go to W&B by default, offline unless logged in).

A logger is one option file in conf/logger/: its `_target_` is a Lightning logger class or a
factory (as `wandb_logger` here); `build_logger` adds the job's name, group, config and output
folder where the target takes them.
"""

from __future__ import annotations

import functools
import inspect
import math
import netrc
import os
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from hydra.utils import get_object

from dfl_bench.lifecycle.private_api import wandb_init_arguments
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.schema import (
    BEST_TEST_ACCURACY,
    CONS_RATIO,
    CU_ANT,
    CU_CONS,
    IDENTITY_FIELDS,
    TEST_ACCURACY,
)

if TYPE_CHECKING:  # Lightning is the trainer's: naming the loggers (choices) needs none of it
    from lightning.pytorch.loggers import Logger, WandbLogger

CONF = Path(CONFIG_DIR) / "logger"
WANDB_MODES = ("auto", "online", "offline", "disabled")
# Run-record fields put in the W&B run summary: a dashboard grouped by experiment then shows a
# table's columns (accuracy, cons%, cu_cons%, cu_ant% of Section 9.1) per row and seed.
SUMMARY_KEYS = (*IDENTITY_FIELDS, TEST_ACCURACY, BEST_TEST_ACCURACY, CONS_RATIO, CU_CONS, CU_ANT)


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


def choices() -> list[str]:
    """The logger options: one yaml file each in conf/logger/."""
    return sorted(p.stem for p in CONF.glob("*.yaml"))


LIGHTNING_LOGGERS = "lightning.pytorch.loggers."  # a module whose Logger classes a target may be


def shipped_targets() -> set[str]:
    """The `_target_` of each conf/logger option (their files are the repository's code)."""
    import yaml

    found = (yaml.safe_load(p.read_text()) or {} for p in CONF.glob("*.yaml"))
    return {str(option["_target_"]) for option in found if "_target_" in option}


def target_of(cfg: Mapping[str, Any]) -> Any:
    """The object a logger option's `_target_` names, if it may be built: the target of a
    conf/logger option, or a Lightning logger class (checked by name before anything is
    imported: an override is untrusted, and building e.g. `os.system` would run a command);
    None for an option without one; else a ValueError naming what is valid."""
    target = cfg.get("_target_")
    if target is None:
        return None
    shipped = shipped_targets()
    valid = f"a conf/logger option's target ({sorted(shipped)}) or a Lightning logger class"
    if not isinstance(target, str) or not (
        target in shipped or target.startswith(LIGHTNING_LOGGERS)
    ):
        raise ValueError(f"logger._target_={target!r} is not a logger; valid: {valid}")
    try:
        found = get_object(target)
    except (ImportError, ValueError):
        raise ValueError(
            f"logger._target_={target!r} does not import; logger options: {choices()}"
        ) from None
    if target not in shipped:
        from lightning.pytorch.loggers import Logger

        if not (inspect.isclass(found) and issubclass(found, Logger)):
            raise ValueError(f"logger._target_={target!r} is not a logger; valid: {valid}")
    return found


ONLINE_TIMEOUT_S = 5.0  # how long online W&B may take to answer before a job refuses to start


def check(cfg: Mapping[str, Any]) -> None:
    """A logger option's `_target_` must be one `target_of` builds, and W&B in online mode needs
    an API key and its host within ONLINE_TIMEOUT_S (checked before training: W&B itself fails
    after the run has started, or after minutes of silence)."""
    if target_of(cfg) is None or cfg.get("_target_") != WANDB_TARGET:
        return
    if wandb_mode(cfg.get("mode") or "auto") != "online":
        return
    if not wandb_logged_in():
        raise ValueError(
            "W&B online mode needs an API key (`wandb login` or WANDB_API_KEY); or log offline "
            "(WANDB_MODE=offline, `wandb sync` later) or not at all (logger=none)"
        )
    why = unreachable(os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai"))
    if why is not None:
        raise ValueError(
            f"W&B online mode: {why}; log offline (WANDB_MODE=offline, `wandb sync` later) or "
            "not at all (logger=none)"
        )


WANDB_TARGET = "dfl_bench.lifecycle.loggers.wandb_logger"


@functools.cache
def unreachable(url: str) -> str | None:
    """Why `url`'s host does not take a connection within ONLINE_TIMEOUT_S (once a process), or
    None."""
    parsed = urlparse(url)
    host = parsed.hostname or "api.wandb.ai"
    port = parsed.port or (80 if parsed.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=ONLINE_TIMEOUT_S).close()
    except OSError as err:
        return f"{host}:{port} cannot be reached within {ONLINE_TIMEOUT_S:g} s ({err})"
    return None


def build_logger(
    cfg: Mapping[str, Any],
    *,
    name: str,
    group: str,
    config: Mapping[str, Any],
    save_dir: str | Path,
    concurrent: bool = False,
) -> Logger | None:
    """The Lightning logger of `cfg` (a conf/logger option): its `_target_` called with the
    option's other keys plus the job context (`name`, `group`, `config`, `save_dir`; with
    `concurrent`, `reinit="create_new"`, so that runs of one process log at once) that the
    target names as parameters and the option leaves unset (null); an option without
    `_target_` logs nothing."""
    target = target_of(cfg)
    if target is None:
        return None
    options = {k: v for k, v in cfg.items() if v is not None and k != "_target_"}
    context = {"name": name, "group": group, "config": dict(config), "save_dir": str(save_dir)}
    if concurrent:
        context["reinit"] = "create_new"
    named = {
        name
        for name, p in inspect.signature(target).parameters.items()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    options |= {k: v for k, v in context.items() if k in named and k not in options}
    if options.get("save_dir") is not None:
        Path(options["save_dir"]).mkdir(parents=True, exist_ok=True)
    return target(**options)


def wandb_logger(
    *,
    name: str,
    group: str,
    config: Mapping[str, Any],
    save_dir: str,
    project: str = "dfl_bench",
    entity: str | None = None,
    mode: str = "auto",
    tags: Sequence[str] = (),
    reinit: str = "finish_previous",
) -> WandbLogger:
    """A W&B run per job, grouped by experiment, offline unless logged in (`wandb_mode`);
    `reinit="create_new"` keeps the process's other runs open (stacked runs)."""
    import wandb
    from lightning.pytorch.loggers import WandbLogger

    logger = WandbLogger(
        project=project,
        entity=entity,
        group=group,
        name=name,
        tags=list(tags),
        config=dict(config),
        save_dir=save_dir,
        mode=wandb_mode(mode),
        reinit=reinit,
        settings=wandb.Settings(console="off", x_disable_stats=True, silent=True),
    )
    # Lightning passes wandb.init an `anonymous` setting even when unset, which wandb has
    # deprecated (one warning per run): a run never sets it, so it is not passed at all.
    wandb_init_arguments(logger).pop("anonymous", None)
    return logger


def log_dir(logger: Logger | None) -> str | None:
    """Where a logger writes: the W&B run folder, the CSV folder, or None."""
    from lightning.pytorch.loggers import WandbLogger

    if isinstance(logger, WandbLogger):
        return str(Path(logger.experiment.dir).parent)
    if logger is not None:
        return logger.log_dir
    return None


def summarize(logger: Logger | None, record: Mapping[str, Any]) -> None:
    """Set SUMMARY_KEYS of the run record in the W&B run summary (a NaN ratio becomes null)."""
    from lightning.pytorch.loggers import WandbLogger

    if isinstance(logger, WandbLogger):
        logger.experiment.summary.update({k: _finite(record.get(k)) for k in SUMMARY_KEYS})


def _finite(value: Any) -> Any:
    """`value`, or None for a NaN or infinite float (strict JSON, as in the run record)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def finish(logger: Logger | None, failed: bool) -> None:
    """Close the logger's own W&B run (if it started) cleanly, so the next job of a sweep
    starts its own run; other runs of the process (stacked runs) stay open."""
    from lightning.pytorch.loggers import WandbLogger

    run = getattr(logger, "_experiment", None) if isinstance(logger, WandbLogger) else None
    if run is not None:
        run.finish(exit_code=1 if failed else 0)
