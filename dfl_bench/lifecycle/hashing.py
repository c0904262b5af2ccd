"""A run's configuration hash: what of a resolved config changes a result (`hashed_config`),
hashed canonically (`config_hash`: a record's file name), and a table cell's (`cell_hash`: its
seeds aside). Records (records.py), their migration (migrate.py) and every reader hash here."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from dfl_bench.schema import CELL_ASIDE, CODE_KEYS, HASHED_AS, NOT_HASHED


def without_code(config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` without its CODE_KEYS (where a task's class lives is no configuration)."""
    out = dict(config)
    for group, key in CODE_KEYS:
        if isinstance(out.get(group), Mapping) and key in out[group]:
            out[group] = {k: v for k, v in out[group].items() if k != key}
    return out


def hashed_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a resolved config that changes a result: all but logging, paths and flags,
    the HASHED_AS settings at their one value, the CODE_KEYS left out."""
    out = {k: v for k, v in without_code(config).items() if k not in NOT_HASHED}
    for (group, key), value in HASHED_AS.items():
        if isinstance(out.get(group), Mapping) and key in out[group]:
            out[group] = {**out[group], key: value}
    return out


def numbers_as_floats(value: Any) -> Any:
    """`value` with every int as a float (bools kept) and -0.0 as 0.0, so that w_dfl=0,
    w_dfl=0.0 and w_dfl=-0.0 hash alike."""
    if isinstance(value, Mapping):
        return {k: numbers_as_floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [numbers_as_floats(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) + 0.0  # -0.0 + 0.0 is 0.0
    return value


def config_hash(config: Mapping[str, Any]) -> str:
    """Short sha256 of the canonical JSON of `hashed_config(config)` (key order and int vs float
    do not matter)."""
    return digest(hashed_config(config))


def digest(hashed: Mapping[str, Any]) -> str:
    """Short sha256 of the canonical JSON of `hashed` (a config's hashed part)."""
    canonical = json.dumps(numbers_as_floats(hashed), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def cell_hash(config: Mapping[str, Any]) -> str:
    """The config hash with CELL_ASIDE aside and every `_target_` left out, at any depth (an
    experiment's table of networks names their classes too): the runs of one table cell share
    it, whichever module their classes lived in."""
    out = without_targets(config)
    for dotted in CELL_ASIDE:
        *parents, key = dotted.split(".")
        node = out
        for name in parents:
            if not isinstance(node.get(name), Mapping):
                break
            node[name] = dict(node[name])
            node = node[name]
        else:
            node.pop(key, None)
    return config_hash(out)


def cell_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What `cell_hash` hashes, seeds included: `hashed_config` with every `_target_` left out."""
    return hashed_config(without_targets(config))


def without_targets(value: Any) -> Any:
    """`value` with every mapping's `_target_` key left out."""
    if isinstance(value, Mapping):
        return {k: without_targets(v) for k, v in value.items() if k != "_target_"}
    if isinstance(value, list | tuple):
        return [without_targets(v) for v in value]
    return value
