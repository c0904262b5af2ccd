"""Overrides read from a file (a record's `overrides`, a plan's cell, a harvest's records) are
untrusted: each must be a plain `key=value` over a key of the configuration (a config group or a
top-level key of conf/config.yaml, at any depth below it). Refused: a Hydra flag
(`--experimental-rerun=...` loads a pickle), a Hydra setting at any depth (`hydra.job.env_set`
sets the job's environment), a package (`group@pkg=`), an interpolation or resolver (`${oc.env:
...}` would put the reader's secrets into a result) in any spelling (a `$` or a backslash
anywhere: Hydra unescapes `$\\{...\\}` into one), a `_target_` (code to build), a key that
sets a path (PATH_KEYS: a file from others names no folder to write in; a record's own
`records_dir` and `checkpoint_dir`, where it ran, are taken off by `located` before the check),
a debug flag, a sweep (`row=a,b` or `range(...)` in a plan's multirun trains configurations
the plan does not name, which its status never counts), and any text that is not one printable
line. Nothing here runs or resolves the text it checks.

    >>> refusal("kb=both") is None
    True
    >>> refusal("--experimental-rerun=/tmp/x.pickle")
    'not a plain key=value'
    >>> refusal("kb.w_dfl=${oc.env:WANDB_API_KEY}")
    'an interpolation (${...}) or an escape'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import OmegaConf

from dfl_bench.paths import CONFIG_DIR
from dfl_bench.schema import NOT_HASHED

# [+|++|~] key[.key|/key]* = value: the key's parts are identifiers, nothing before the key
PLAIN = re.compile(r"(?:\+\+|\+|~)?([A-Za-z_][A-Za-z0-9_]*(?:[./][A-Za-z0-9_]+)*)=(.*)", re.S)


OPTION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.,-]*")  # a group's option(s): names, no path
# Keys that set where something is read or written: never from a file from others.
PATH_KEYS = frozenset(
    {"records_dir", "checkpoint_dir", "data.cache_dir", "data.root", "logger.save_dir"}
)
WHERE_IT_RAN = ("records_dir", "checkpoint_dir")  # a record's own folders, not a setting of it
APPLIED_ONLY = ("row",)  # the one unhashed key a plan's override may set: which row of a table


@cache
def config_groups(conf_dir: str = CONFIG_DIR) -> frozenset[str]:
    """The config groups under `conf_dir` (its folders, but Hydra's)."""
    return frozenset(p.name for p in Path(conf_dir).iterdir() if p.is_dir() and p.name != "hydra")


@cache
def known_keys(conf_dir: str = CONFIG_DIR) -> frozenset[str]:
    """The configuration's own top-level keys under `conf_dir`: its config groups and the keys
    of config.yaml (but `defaults` and `hydra`)."""
    primary = OmegaConf.to_container(OmegaConf.load(Path(conf_dir) / "config.yaml"))
    keys = {str(k) for k in primary if k not in ("defaults", "hydra")}  # type: ignore[union-attr]
    return config_groups(conf_dir) | keys


def refusal(override: Any, conf_dir: str = CONFIG_DIR, applied: bool = False) -> str | None:
    """Why `override` (read from a file) is no plain config override of the configuration under
    `conf_dir` (this checkout's, or the commit's a probe runs), or None when it is one; one a
    tool `applied` (a plan's) sets only what a result depends on, or the row (APPLIED_ONLY)."""
    if not isinstance(override, str):
        return f"a {type(override).__name__}, not a text"
    if not override.isprintable():
        return "not one printable line"
    match = PLAIN.fullmatch(override)
    if match is None:
        return "not a plain key=value"
    key, value = match.groups()
    parts = re.split(r"[./]", key)
    if "hydra" in parts:
        return "a Hydra setting"
    if "_target_" in override:
        return "a _target_ (code to build)"
    if "$" in override or "\\" in override:
        return "an interpolation (${...}) or an escape"
    if key in PATH_KEYS:
        return f"{key} sets a path"
    if parts[0] == "debug":
        return "a debug flag"
    if parts[0] not in known_keys(conf_dir):
        return f"{parts[0]!r} is no key of the configuration"
    if key in config_groups(conf_dir) and (".." in value or not OPTION.fullmatch(value)):
        return "a config group's option must be a name (no path)"
    if (why := one_value(override)) is not None:
        return why
    if applied and parts[0] in NOT_HASHED and parts[0] not in APPLIED_ONLY:
        return (
            f"{parts[0]} is how a run is kept or shown, not what it computes (`force` reruns "
            "over finished records): a file does not choose it"
        )
    return None


@cache
def _parser() -> OverridesParser:
    return OverridesParser.create()


@cache
def one_value(override: str) -> str | None:
    """Why Hydra does not read `override` as one value, or None: a sweep (`a,b`, `range(...)`,
    `choice(...)`, `glob(...)`) would have a tool that applies it in a multirun train jobs the
    file does not name."""
    try:
        parsed = _parser().parse_override(override)
    except HydraException:
        return "not an override Hydra reads"
    if parsed.is_sweep_override():
        return "a sweep (a,b / range / choice / glob: several jobs), not one value"
    return None


def located(overrides: Iterable[Any]) -> list[Any]:
    """A record's overrides without those that say where it ran (WHERE_IT_RAN: its records and
    checkpoint folders), which a tool reading the record neither checks nor applies."""
    out = []
    for override in overrides:
        match = PLAIN.fullmatch(override) if isinstance(override, str) else None
        if match is None or match.group(1) not in WHERE_IT_RAN:
            out.append(override)
    return out


def check_file_overrides(
    overrides: Iterable[Any], source: str, conf_dir: str = CONFIG_DIR, applied: bool = False
) -> list[str]:
    """`overrides` from the file `source`, each checked (`refusal` against `conf_dir`, `applied`
    by a tool that runs them); a ValueError naming the first refused and why."""
    out = []
    for override in overrides:
        why = refusal(override, conf_dir, applied)
        if why is not None:
            raise ValueError(
                f"{source}: the override {str(override)[:80]!r} is refused ({why}); an override "
                "read from a file must be a plain key=value of the configuration"
            )
        out.append(override)
    return out
