"""A sweep's jobs, expanded and validated before any is trained.

    expand(overrides, params)  ->  each job's override list (as Hydra's basic sweeper makes them)
    job_config(overrides)      ->  that job's composed config (no hydra node)
    invalid_jobs(jobs)         ->  "overrides: reason" for each job that would fail its checks

`ValidateSweep` (registered in conf/config.yaml) runs them when a multirun starts, so one bad
value stops the sweep with every invalid job listed, before the first job trains.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from typing import Any

from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.experimental.callback import Callback
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException


def expand(overrides: Sequence[str], params: Mapping[str, Any] | None = None) -> list[list[str]]:
    """The job override lists of a sweep: `params` (hydra.sweeper.params) then `overrides`."""
    lines = [f"{key}={value}" for key, value in (params or {}).items()] + list(overrides)
    hydra = GlobalHydra.instance()
    loader = hydra.config_loader() if hydra.is_initialized() else None
    parsed = OverridesParser.create(config_loader=loader).parse_overrides(lines)
    return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]


def job_config(overrides: Sequence[str], config_name: str = "config") -> DictConfig:
    """One job's composed config: in a running Hydra app its search path, else conf/."""
    from dfl_bench.lifecycle.train import CONFIG_DIR

    outside = not GlobalHydra.instance().is_initialized()
    context = initialize_config_dir(CONFIG_DIR, version_base="1.3") if outside else nullcontext()
    with context:
        return compose(config_name, overrides=list(overrides))


def invalid_jobs(jobs: Sequence[Sequence[str]], hydra_overrides: Sequence[str] = ()) -> list[str]:
    """'job overrides: reason' for every job whose config fails to compose or to check."""
    from dfl_bench.lifecycle.train import checked

    errors = []
    for job in jobs:
        try:
            checked(job_config([*hydra_overrides, *job]), job)
        except (ValueError, HydraException, OmegaConfBaseException) as err:
            errors.append(f"{' '.join(job) or '(no overrides)'}: {err}")
    return errors


class ValidateSweep(Callback):
    """Hydra callback: check every job of a basic-sweeper multirun before launching any."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from dfl_bench.lifecycle.train import EXIT_INVALID

        if not str(config.hydra.sweeper.get("_target_", "")).endswith("BasicSweeper"):
            return
        jobs = expand(config.hydra.overrides.task, config.hydra.sweeper.get("params"))
        errors = invalid_jobs(jobs, config.hydra.overrides.hydra)
        reasons = {error.split(": ", 1)[-1] for error in errors}
        if errors and len(errors) == len(jobs) and len(reasons) == 1:
            print(
                f"[dfl_bench] invalid configuration: {reasons.pop()} (every one of the "
                f"{len(jobs)} sweep jobs, so none was run)",
                file=sys.stderr,
            )
            raise SystemExit(EXIT_INVALID)
        if errors:
            print(
                f"[dfl_bench] invalid configuration: {len(errors)} of {len(jobs)} sweep jobs, "
                "so none was run:\n  " + "\n  ".join(errors),
                file=sys.stderr,
            )
            raise SystemExit(EXIT_INVALID)
