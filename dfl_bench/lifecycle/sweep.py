"""A sweep's jobs, expanded and validated before any is trained.

    expand(overrides, params)  ->  each job's override list (as Hydra's basic sweeper makes them)
    job_config(overrides)      ->  that job's composed config (no hydra node)
    shared_job_config(...)     ->  the same, composing once per choice of config groups
    invalid_jobs(jobs)         ->  "overrides: reason" for each job that would fail its checks
    check_sweep(...)           ->  exit 2 naming every invalid job of a sweep

The sweeper of conf/config.yaml (`hydra/sweeper=checked`, hydra_plugins/dfl_bench_sweeper) runs
`check_sweep` when a multirun starts, so one bad value stops the sweep with every invalid job
listed, before the first job trains.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from dfl_bench.lifecycle.private_api import basic_sweeper
from dfl_bench.paths import CONFIG_DIR


def expand(overrides: Sequence[str], params: Mapping[str, Any] | None = None) -> list[list[str]]:
    """The job override lists of a sweep: `params` (hydra.sweeper.params) then `overrides`."""
    lines = [f"{key}={value}" for key, value in (params or {}).items()] + list(overrides)
    hydra = GlobalHydra.instance()
    loader = hydra.config_loader() if hydra.is_initialized() else None
    parsed = OverridesParser.create(config_loader=loader).parse_overrides(lines)
    return [job for batch in basic_sweeper().split_arguments(parsed, None) for job in batch]


def search_path() -> AbstractContextManager:
    """Where configs compose: in a running Hydra app its search path, else conf/."""
    if GlobalHydra.instance().is_initialized():
        return nullcontext()
    return initialize_config_dir(CONFIG_DIR, version_base="1.3")


def job_config(overrides: Sequence[str], config_name: str = "config") -> DictConfig:
    """One job's composed config: in a running Hydra app its search path, else conf/."""
    with search_path():
        return compose(config_name, overrides=list(overrides))


# (groups chosen, keys set) -> the copy of that choice's composition those jobs set values on
Setting = dict[tuple[tuple[str, ...], tuple[str, ...]], DictConfig]


def shared_job_config(
    base: Sequence[str],
    job: Sequence[str],
    composed: dict[tuple[str, ...], DictConfig],
    setting: Setting,
) -> DictConfig:
    """The config Hydra composes for `base + job`, composing once per choice of config groups
    (`composed` caches them, never set on) and setting the job's plain values (row, seed, a
    swept parameter): what `compose(base + job)` gives, without composing every job. The jobs
    of one choice that set the same keys share one copy of its composition (`setting`), each
    setting all of them, which is valid until the next job's (no copy per job; a job never
    sees a value another set of keys put there). A job that does not
    compose that way is composed whole: Hydra's own config, or its own error."""
    try:
        return _set_on_shared(base, job, composed, setting)
    except (HydraException, OmegaConfBaseException):
        return compose("config", overrides=[*base, *job])


def _set_on_shared(
    base: Sequence[str],
    job: Sequence[str],
    composed: dict[tuple[str, ...], DictConfig],
    setting: Setting,
) -> DictConfig:
    """shared_job_config's way: the composed config of the job's group choices, its plain
    values set on it."""
    groups, values = [], []
    loader = GlobalHydra.instance().config_loader()
    for override in OverridesParser.create().parse_overrides(list(job)):
        key = override.key_or_group
        plain = override.is_sweep_override() is False and not key.startswith(("+", "~", "hydra"))
        if plain and override.package is None and not loader.repository.group_exists(key):
            values.append((key, override.value()))
        else:
            groups.append(override.input_line)
    key = tuple(groups)
    if key not in composed:  # as composed, never set on: each other set of keys copies it
        composed[key] = compose("config", overrides=[*base, *groups])
    keys = tuple(dotted for dotted, _ in values)
    if (key, keys) not in setting:
        setting[key, keys] = composed[key].copy()
    cfg = setting[key, keys]  # the jobs setting these keys share it: each sets them all
    for dotted, value in values:
        OmegaConf.update(cfg, dotted, value, merge=False)
    return cfg


def invalid_jobs(jobs: Sequence[Sequence[str]], hydra_overrides: Sequence[str] = ()) -> list[str]:
    """'job overrides: reason' for every job whose config fails to compose or to check; the
    jobs share their compositions (shared_job_config)."""
    from dfl_bench.lifecycle.train import checked

    errors: list[str] = []
    composed: dict[tuple[str, ...], DictConfig] = {}
    setting: Setting = {}
    with search_path():
        for job in jobs:
            try:
                checked(shared_job_config(hydra_overrides, job, composed, setting), job)
            except (ValueError, HydraException, OmegaConfBaseException) as err:
                errors.append(f"{' '.join(job) or '(no overrides)'}: {err}")
    return errors


def check_sweep(
    overrides: Sequence[str], params: Mapping[str, Any] | None, hydra_overrides: Sequence[str]
) -> None:
    """Exit 2 (invalid input) naming every invalid job of the sweep of `overrides` and `params`
    (hydra.sweeper.params), before any job is launched; nothing if every job is valid."""
    from dfl_bench.lifecycle.train import EXIT_INVALID

    jobs = expand(overrides, params)
    errors = invalid_jobs(jobs, hydra_overrides)
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
