"""Which configuration each cell of the paper's tables trains: the experiments (conf/experiment/,
one per table) and profiles, a cell's config composed and resolved as its jobs train it (its
hash is what a record must carry to fill the cell), composing once per experiment and profile."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from dfl_bench.lifecycle import resolve, sweep
from dfl_bench.lifecycle.records import cell_hash
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.results import config_cache

CONF = Path(CONFIG_DIR)
DEFAULT = "default"  # `python -m dfl_bench` alone: the fixed operators of Section 10.2
SPREAD = ("baseline", DEFAULT)  # the experiments whose seed spread the reproduction measures
# The reproduction's records (committed); ad-hoc runs write to `records_dir` of conf/config.yaml.
RECORDS = "results/records"
PAPER_PROFILE = "paper"  # the paper's budget: "at most 70.000 iterations" (Section 10)


# Experiments that choose a setting rather than fill a table to reproduce: each row its own
# budget, evaluated on a validation split, or a setting a declared rule adopts before its final
# rows train, and those final rows (their records render beside the tables; `make
# reproduce-tables` and the GPU session leave them out; each has its own make target).
SEARCHES = {
    "mnist_addition_budget": "make addition-budget",
    "mnist_addition_budget_nets": "make addition-budget-nets",
    "mnist_addition_warmup_nets": "make addition-warmup-nets",
    "digit_ceiling_search": "make ceiling-search",
    "mnist_addition_recipe_nets": "make recipe-search",
    "mnist_addition_collapse_nets": "make collapse-search",
    "mnist_addition_minute_search": "make minute-search",
    "mnist_addition_final_nets": "make addition-finals",
}


# The budgets a table beyond the paper is reproduced at (its committed records' profiles): a
# reproduction at another profile leaves it out unless TABLES names it, so a fresh clone's
# `make reproduce-tables` trains nothing its records hold at another budget. The paper's tables
# (and any experiment not named here) are reproduced at whichever profile is asked for; an
# experiment that pins its budget (`own_budget`) trains only at its own.
BEYOND_BUDGETS = {
    "mnist_addition": ("long", "minute"),
    "mnist_addition_digits": ("long",),
    "operator_families": ("long",),
    "mnist_addition_frontier": ("frontier",),
}


# Budgets chosen after their runs on the test accuracy of the very records a table reports: a
# table at such a profile shows them, post hoc, and decides no comparison with them.
POST_HOC_BUDGETS = {
    "minute": "chosen on the final test accuracy of seeds 0-2, the records shown "
    "(results/bench/addition_minute.md)",
}


def reproduced_at(experiment: str, profile: str) -> bool:
    """Whether a reproduction at `profile` trains `experiment` when TABLES leaves it unnamed."""
    if own_budget(experiment):
        return True  # at its own budget, whatever `profile` is
    return profile in BEYOND_BUDGETS.get(experiment, (profile,))


def experiments() -> list[str]:
    """Every experiment (conf/experiment/*.yaml, one per table) but the SEARCHES, and the
    default config."""
    found = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
    return [name for name in found if name not in SEARCHES] + [DEFAULT]


def profiles() -> list[str]:
    """The training budgets (conf/profile/*.yaml)."""
    return sorted(p.stem for p in (CONF / "profile").glob("*.yaml"))


@cache
def budget(profile: str) -> int:
    """A profile's iterations (`max_steps` of conf/profile/<profile>.yaml)."""
    return int(OmegaConf.load(CONF / "profile" / f"{profile}.yaml").profile.max_steps)


def selected(tables: str | None) -> list[str]:
    """The experiments named in a comma-separated `tables` (all when empty; one naming none,
    `,`, is refused), in that order."""
    valid = experiments()
    names = [t.strip() for t in (tables or "").split(",") if t.strip()]
    if (tables or "").strip() and not names:
        raise ValueError(f"TABLES={tables!r} names no experiment (leave it empty for all)")
    names = names or valid
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise ValueError(f"unknown experiment {unknown[0]!r} in TABLES; valid: {valid}")
    return list(dict.fromkeys(names))


def base_overrides(experiment: str) -> list[str]:
    """The command-line overrides that select `experiment` (none for the default config)."""
    return [] if experiment == DEFAULT else [f"+experiment={experiment}"]


@cache
def own_budget(experiment: str) -> str | None:
    """The budget an experiment pins in its yaml (`profile.name`, its rows' steps chosen by a
    declared rule), else None: such an experiment trains at its own budget whatever profile a
    reproduction names, since another profile's settings would mix into it (a configuration
    that no record of it has)."""
    if experiment == DEFAULT:
        return None
    spec = OmegaConf.load(CONF / "experiment" / f"{experiment}.yaml")
    name = OmegaConf.select(spec, "profile.name", default=None, throw_on_resolution_failure=False)
    return None if name is None else str(OmegaConf.to_container(spec)["profile"]["name"])


def budget_overrides(experiment: str, profile: str) -> list[str]:
    """`profile=<profile>` for an experiment that trains at a reproduction's profile, nothing
    for one that pins its own budget (`own_budget`)."""
    return [] if own_budget(experiment) else [f"profile={profile}"]


@contextmanager
def package_conf() -> Iterator[None]:
    """Hydra initialized on the package's conf/, also inside a running Hydra app (a multirun's
    checked sweeper prints its table from its records): the app's Hydra is set aside and
    restored after. Inside an app `initialize_config_dir` alone refuses, and that refusal was
    once kept in the config cache as "this cell does not compose", hiding a row's records."""
    running = GlobalHydra.instance()
    app = running.hydra if running.is_initialized() else None
    running.clear()
    try:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            yield
    finally:
        if app is not None:
            GlobalHydra.instance().clear()
            GlobalHydra.instance().initialize(app)


@cache
def _composed(base: tuple[str, ...]) -> tuple[dict, dict]:
    """The caches of sweep.shared_job_config for the cells of `base` (one experiment at one
    profile): the configs composed so far, one per choice of config groups, and the copies of
    them the cells set values on."""
    return {}, {}


@cache
def cell_config(
    experiment: str, profile: str, key: str | None, value: str, also: tuple[str, ...] = ()
) -> dict[str, Any] | None:
    """The resolved config (seed 0) of `experiment`'s cell `key=value` at `profile` as its jobs
    train it today (`budget_overrides`); None when that does not compose (no such experiment,
    profile or row). The cells of one experiment share its composition, as its planned jobs do
    (sweep.shared_job_config)."""
    base = [*base_overrides(experiment), *budget_overrides(experiment, profile)]
    job = ["seed=0"] if key is None else ["seed=0", f"{'kb' if key == 'kb.name' else key}={value}"]
    job += also  # a setting beside the row's (a staged search's `stage=final`)

    def compute() -> dict[str, Any] | None:
        try:
            with package_conf():
                config = sweep.shared_job_config(base, job, *_composed(tuple(base)))
                return resolve.resolved_config(config)
        except (ValueError, OSError, HydraException, OmegaConfBaseException):
            return None

    return config_cache.cached("cell", [*base, *job], compute)


@cache
def cell_digest(experiment: str, profile: str, key: str | None, value: str) -> str | None:
    """`cell_hash` of `cell_config`'s config of the cell (None where it does not compose)."""
    config = cell_config(experiment, profile, key, value)
    return None if config is None else cell_hash(config)
