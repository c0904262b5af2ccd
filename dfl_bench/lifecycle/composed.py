"""What the configuration composes, read from its yamls without Hydra (file_overrides.file_values):
the keys every composition gives a group's mapping (`check_complete`). A job's check
(guards.check_keys) and a run record's (record_config.config_refusal) apply it alike: one
configuration, one hash.

    >>> sorted(always_keys("optimizer", "sgd"))
    ['lr', 'momentum', 'name']
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from dfl_bench.lifecycle.file_overrides import config_groups, file_values
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.schema import CODE_KEYS, NOT_HASHED

PRIMARY = "config.yaml"


def _mapping(path: str, group: str, conf_dir: str = CONFIG_DIR) -> dict[str, Any]:
    """The mapping the yaml `path` under `conf_dir` gives the top-level key `group` (nested
    values as mappings again)."""
    out: dict[str, Any] = {}
    for key, value in file_values(conf_dir).get(path, ()):
        if key.startswith(f"{group}."):
            *parents, last = key.removeprefix(f"{group}.").split(".")
            node = out
            for part in parents:
                node = node.setdefault(part, {})
            node[last] = value
    return out


def _option_paths(group: str, name: Any, conf_dir: str) -> list[str]:
    """The yaml of group `group` whose file `name` names, else every one whose mapping's `name`
    is `name` (conf/kb/ce_pair.yaml is `same`'s too), else every one of the group."""
    paths = [p for p in file_values(conf_dir) if p.startswith(f"{group}/") and p.count("/") == 1]
    if f"{group}/{name}.yaml" in paths:
        return [f"{group}/{name}.yaml"]
    named = [p for p in paths if _mapping(p, group, conf_dir).get("name") == name]
    return named or paths


@cache
def always_keys(group: str, name: Any, conf_dir: str = CONFIG_DIR) -> frozenset[str]:
    """The keys every composition gives mapping `group` named `name`: those each yaml of it
    sets (`_option_paths`; where none is named so, as a budget an experiment renames, those
    every yaml of the group sets), config.yaml's own where `group` is no group (`model`); no
    CODE_KEYS (a record made before classes has none)."""
    code = {key for where, key in CODE_KEYS if where == group}
    if group not in config_groups(conf_dir):
        return frozenset(_mapping(PRIMARY, group, conf_dir)) - code
    sets = [set(_mapping(p, group, conf_dir)) for p in _option_paths(group, name, conf_dir)]
    return frozenset(set.intersection(*sets) if sets else set()) - code


def check_complete(config: Mapping[str, Any], required: Mapping[str, bool]) -> None:
    """Every key of `required` (guards.required_keys) that a hash reads is in `config`, and
    every key its composition always gives a mapping there (`always_keys`): without one, the
    code's default trains the run its yaml names under another hash (`~kb.scope`), and a
    record of such a config is none of a job of this checkout."""
    for key, mapping in required.items():
        if key in NOT_HASHED:
            continue
        if key not in config:
            raise ValueError(f"{key} is missing: every job's configuration has it")
        value = config[key]
        if not mapping or not isinstance(value, Mapping):
            continue
        name = value.get("name") if isinstance(value.get("name"), str) else None  # else unknown
        for missing in sorted(always_keys(key, name) - set(map(str, value))):
            option = f" {name!r}" if name is not None else ""
            raise ValueError(
                f"{key}.{missing} is missing: every configuration of {key}{option} has it "
                f"(without it the code's default trains under another hash); set "
                f"{key}.{missing}=<value>"
            )
