"""The private parts of other libraries this package reaches into, each once, here, where no
public API does the same; PINNED names the version each use was written for (constraints.txt's,
what `make install` installs), and tests/lifecycle/test_private_api.py fails when the installed
version is another, so each use is read again before it is trusted.

- Hydra: its command-line parser (`python -m dfl_bench` checks a command before Hydra starts)
  and its basic sweeper (the checked sweeper extends it; sweep.py splits a sweep as it does).
- Lightning: the trainer's SIGTERM flag (Ctrl-C stops as SIGTERM does; a submitit requeue
  keeps training until its own signal).
- W&B's Lightning logger: the arguments it will pass wandb.init (one deprecated setting out).
- submitit: the SLURM job watcher's polling delay (the quiet sacct watcher keeps it).
"""

from __future__ import annotations

import argparse
from typing import Any

from hydra._internal.utils import get_args_parser

PINNED = {"hydra-core": "1.3.8", "lightning": "2.6.6", "wandb": "0.31.0", "submitit": "1.5.4"}

__all__ = ["PINNED", "basic_sweeper", "hydra_args_parser", "set_received_sigterm",
           "wandb_init_arguments", "watcher_delay"]  # fmt: skip


def basic_sweeper() -> type:
    """Hydra's basic sweeper class as its module holds it now: Hydra's plugin scan executes
    its plugin modules again, so a class imported once would go stale (super() then fails)."""
    from hydra._internal.core_plugins import basic_sweeper as module

    return module.BasicSweeper


def hydra_args_parser() -> argparse.ArgumentParser:
    """Hydra's own command-line parser (its flags and the overrides)."""
    return get_args_parser()


def set_received_sigterm(trainer: Any, value: bool) -> None:
    """Set the Lightning trainer's SIGTERM flag: True stops it after the running step (with its
    checkpoint), False goes on."""
    trainer._signal_connector.received_sigterm = value


def wandb_init_arguments(logger: Any) -> dict[str, Any]:
    """The arguments Lightning's WandbLogger will pass wandb.init (a mutable dict)."""
    return logger._wandb_init


def watcher_delay(watcher: Any) -> float:
    """The polling delay of submitit's SLURM job watcher, in seconds."""
    return watcher._delay_s
