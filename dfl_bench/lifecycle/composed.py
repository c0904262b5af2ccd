"""What the configuration composes, read from its yamls without Hydra (file_overrides.file_values):
the keys every composition gives a group's mapping (`check_complete`) and the value it gives a
key that a run does not read (`check_idle`). A job's check (guards.check_config) and a run
record's (record_config.config_refusal) apply both alike: one configuration, one hash.

    >>> option_mapping("tnorm", "yager")  # conf/tnorm/yager.yaml, conf/recommended/'s p over it
    {'name': 'yager', 'p': 1.5, 'eps': 0.0}
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from dfl_bench.lifecycle.file_overrides import config_groups, file_values
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.schema import CODE_KEYS, NOT_HASHED
from dfl_bench.tasks.values import TASKS

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


@cache
def default_options(conf_dir: str = CONFIG_DIR) -> dict[str, str]:
    """Each group's option in config.yaml's defaults list (`tnorm: yager`)."""
    primary = OmegaConf.to_container(OmegaConf.load(Path(conf_dir) / PRIMARY))
    assert isinstance(primary, dict)
    return {
        str(group): str(option)
        for entry in primary["defaults"]
        if isinstance(entry, dict)
        for group, option in entry.items()
        if " " not in str(group)
    }


def option_mapping(group: str, option: str, conf_dir: str = CONFIG_DIR) -> dict[str, Any]:
    """What option `option` of config group `group` composes: its yaml's mapping, with that of
    its conf/recommended/ yaml (Section 10.2's parameters, config.yaml's defaults) over it."""
    own = _mapping(f"{group}/{option}.yaml", group, conf_dir)
    return {**own, **_mapping(f"recommended/{group}/{option}.yaml", group, conf_dir)}


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


def composed_value(config: Mapping[str, Any], key: str, conf_dir: str = CONFIG_DIR) -> Any:
    """The value the configuration composes for the dotted `key` of `config`: a group whole
    (`tnorm`) as config.yaml's default option gives it (`option_mapping`); a key of a group's
    mapping (`kb.scope`) as the yaml of the option `config` names sets it; config.yaml's own
    (`model`) as it sets it."""
    group, _, rest = key.partition(".")
    if group not in config_groups(conf_dir):
        node: Any = _mapping(PRIMARY, group, conf_dir)
    elif not rest:
        return option_mapping(group, default_options(conf_dir)[group], conf_dir)
    else:
        name = (config.get(group) or {}).get("name")
        node = _mapping(_option_paths(group, name, conf_dir)[0], group, conf_dir)
    for part in rest.split(".") if rest else ():
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def check_idle(config: Mapping[str, Any]) -> None:
    """No key that the run of `config` does not read (its task's declared `idle`, tasks/values
    TASKS: the paper's task without a DFL loss) at another value than the configuration
    composes (`composed_value`): another trains the same numbers under another hash."""
    name = (config.get("task") or {}).get("name")
    settings = TASKS.get(name) if isinstance(name, str) else None
    idle = settings.idle(config) if settings is not None and settings.idle else None
    if idle is None:
        return
    why, keys = idle
    for key in keys:
        group, _, leaf = key.partition(".")
        node = config.get(group)
        if group not in config or leaf and not (isinstance(node, Mapping) and leaf in node):
            continue  # absent: check_complete names it
        value, composed = (node[leaf] if leaf else node), composed_value(config, key)
        if value != composed:
            raise ValueError(
                f"{key}={_shown(value)} is not read {why}: leave it as "
                f"composed, {_shown(composed)} (another value trains the same numbers under "
                "another hash)"
            )


def _shown(value: Any) -> str:
    """`value` as a message shows it: null as the yamls spell it, else its repr."""
    return "null" if value is None else repr(value)
