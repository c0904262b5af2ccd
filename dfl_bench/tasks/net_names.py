"""The networks of conf/net by name, read without torch, and the rule that ties a config's
`net.name` (hashed) to its `net._target_` (never hashed, schema.CODE_KEYS): one hash, one
network. A job (guards.check_config, at its start and in a sweep's plan) and a run record's
check (record_config.config_refusal) both apply `net_refusal`; the job's network is held to it
again by class where it is built (nets.check_name)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from dfl_bench.paths import CONFIG_DIR


def choices() -> list[str]:
    """The networks conf/net offers (its yaml files' names)."""
    return sorted(p.stem for p in (Path(CONFIG_DIR) / "net").glob("*.yaml"))


@cache
def targets() -> dict[str, str]:
    """The `_target_` of each network of conf/net, by its name."""
    return {name: str(OmegaConf.load(Path(CONFIG_DIR) / "net" / f"{name}.yaml")["_target_"])
            for name in choices()}  # fmt: skip


def net_refusal(net: Mapping[str, Any], job: bool = True) -> str | None:
    """Why `net` (a config's mapping) lets another network train under its hash, or None: a
    `name` that is no text (null); a name of conf/net whose `_target_` is not that network's
    (not `job`: a record's may name where the class lived before, but no other network); a
    name conf/net does not hold (a network of one's own, its yaml on Hydra's search path)
    without a `_target_`, or whose `_target_` is one of conf/net's networks."""
    name, target = net.get("name"), net.get("_target_")
    valid = f"valid choices: {choices()} (or a network of your own, with its _target_)"
    if not isinstance(name, str) or not name:
        return f"net.name={name!r} names no network; {valid}"
    if name in targets():
        other = target in targets().values()  # another network's, where not this one's
        if target is not None and target != targets()[name] and (job or other):
            return (
                f"net._target_={target!r} is not net {name!r}'s _target_ {targets()[name]!r} "
                "(net.name is hashed, net._target_ is not)"
            )
        return None
    builds = [other for other, own in targets().items() if own == target]
    if target is None or builds:
        what = f"its _target_ builds net {builds[0]!r}" if builds else "it has no _target_"
        return f"net.name={name!r} is no network of conf/net, and {what}; {valid}"
    return None
