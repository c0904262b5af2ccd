"""A job's config as plain data: its table row checked and interpolated in, `rows`/`families`
dropped, its provenance merged (light: Hydra and OmegaConf only, so the planner and the results
module resolve configs without the trainer)."""

from __future__ import annotations

import math
import re
from functools import cache
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

from dfl_bench.kinds import KINDS
from dfl_bench.lifecycle.provenance import job_provenance
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.tasks import PAPER_TASK

UNRESOLVED = ("rows", "families", "published", "rule")  # a config's tables and declared rule:
# not part of what a job is
RESOLVERS = ("oc.select",)  # the resolvers a job's config may call (the rows' defaults use it)
HYDRA_RESOLVERS = ("now", "hydra")  # and Hydra's own settings (hydra.run.dir: `${now:...}`)
RESOLVER = re.compile(r"\$\{\s*([^${}:\s]+)\s*:")  # `${name:` of a resolver call, at any depth
OPTIONS = Path(CONFIG_DIR)  # conf/<kind>/<name>.yaml: each operator option
DEFAULT = "default"  # the experiment of a run without +experiment: the paper's task


def resolved_config(cfg: DictConfig) -> dict[str, Any]:
    """The job's config as plain data, its table row (if any) checked and interpolated in, and
    its `provenance` (the experiment's, updated by its row's; `dfl_bench.lifecycle.provenance`);
    a resolver but RESOLVERS anywhere in it is refused before anything resolves (`resolvers`)."""
    raw = OmegaConf.to_container(cfg, resolve=False)
    check_resolvers({k: v for k, v in raw.items() if k != "hydra"})  # type: ignore[union-attr]
    rows = cfg.get("rows") or {}
    if rows and cfg.get("row") not in rows:
        raise ValueError(
            f"row={cfg.get('row')!r} is not a row of experiment {cfg.experiment_name!r}; "
            f"valid rows: {list(rows)}"
        )
    config: dict[str, Any] = {}
    for key in cfg:  # all but the tables of rows and families, which jobs only read from
        if key not in UNRESOLVED:
            value = cfg[key]
            container = isinstance(value, DictConfig | ListConfig)
            config[str(key)] = (
                OmegaConf.to_container(value, resolve=True, throw_on_missing=True)
                if container
                else value
            )
    task = (config.get("task") or PAPER_TASK)["name"]
    if config.get("experiment_name") == DEFAULT and task != PAPER_TASK["name"]:
        config["experiment_name"] = task  # `default` is the paper task's: file under the task
    for kind in KINDS:  # `tnorm.p='2'` is `tnorm.p=2`, a row's `{name: yager, p: 2}` is
        if isinstance(config.get(kind), dict):  # `tnorm=yager`: one configuration, one hash
            name = config[kind].get("name")  # a list or a mapping is named by the checks
            defaults = option_defaults(kind, name) if isinstance(name, str) else {}
            spelled = {**defaults, **config[kind]}
            config[kind] = {k: _number(v) for k, v in spelled.items()}
    row_provenance = config.pop("row_provenance", None)
    config["provenance"] = job_provenance(
        config.get("provenance"), row_provenance, config.get("row"), config
    )
    return config


def check_resolvers(node: Any, key: str = "", allowed: tuple[str, ...] = RESOLVERS) -> None:
    """No resolver but `allowed` in the unresolved config `node` (a yaml file's `${oc.env:...}`
    would put the reader's environment into a record, `${oc.decode:...}` parse text): a
    ValueError naming the key (never its value) and the resolvers a config may call."""
    if isinstance(node, dict | list):
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for name, value in items:
            check_resolvers(value, f"{key}.{name}" if key else str(name), allowed)
    elif isinstance(node, str):
        called = {m.group(1) for m in RESOLVER.finditer(node)} - set(allowed)
        if called:
            raise ValueError(
                f"{key} calls the resolver {sorted(called)[0]!r}; a configuration calls none but "
                f"{list(allowed)} (it reads nothing from the environment)"
            )


@cache
def option_defaults(kind: str, name: Any) -> dict[str, Any]:
    """The settings of option `conf/<kind>/<name>.yaml` (a row that names the operator and not
    each of its settings has the others at the option's); {} where no such option exists."""
    path = OPTIONS / kind / f"{name}.yaml"
    if not (isinstance(name, str) and name.isidentifier() and path.is_file()):
        return {}
    return dict(OmegaConf.to_container(OmegaConf.load(path)))  # type: ignore[arg-type]


def _number(value: Any) -> Any:
    """An operator parameter given as text that reads as a finite number, as that number."""
    if not isinstance(value, str):
        return value
    try:
        number = float(value)
    except ValueError:
        return value
    return (int(number) if number.is_integer() else number) if math.isfinite(number) else value
