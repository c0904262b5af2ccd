"""A committed plan file (results/seed_plan/plan.json, results/headline_plan/plan.json), read as
what it is: a file from others, checked before anything of it runs (dfl_bench/untrusted.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from omegaconf import OmegaConf

from dfl_bench.lifecycle.file_overrides import check_file_overrides
from dfl_bench.lifecycle.records import cell_hash
from dfl_bench.reproduction.plan import JOB_SECONDS
from dfl_bench.results import cell_configs, load_paper
from dfl_bench.results.cells import row_configuration
from dfl_bench.results.paper import PaperTable
from dfl_bench.untrusted import read_json

# A folder name each side; no `,` or `=`: the row names a Hydra sweep folder (hydra.sweep.dir),
# where `a,b` is a sweep Hydra refuses and `=` no override it reads.
CELL = re.compile(r"[A-Za-z0-9_]+/-?[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def read_plan(plan_file: Path) -> dict:
    """The plan at `plan_file`, an untrusted file, checked before anything of it runs: a known
    profile, each cell `<experiment>/<row>` with 1..100 seeds, a plain config override
    (lifecycle/file_overrides.py) that trains the cell's row (`check_trains_row`) and a run's
    wall time in seconds (the profile's planning default where the cell names none); else a
    ValueError naming what is wrong."""
    p = read_json(plan_file)
    if not isinstance(p, dict) or not isinstance(p.get("cells"), dict):
        raise ValueError(f"{plan_file} holds no plan (a mapping with `cells`)")
    if p.get("profile") not in cell_configs.profiles():
        raise ValueError(
            f"{plan_file}: profile {p.get('profile')!r} is none of {cell_configs.profiles()}"
        )
    tables = load_paper().tables
    for cell, spec in p["cells"].items():
        if not CELL.fullmatch(str(cell)) or ".." in str(cell):
            raise ValueError(
                f"{plan_file}: cell {str(cell)[:80]!r} is no <experiment>/<row> of plain names "
                "(letters, digits, _ . + -)"
            )
        if str(cell).split("/", 1)[0] not in cell_configs.experiments():
            raise ValueError(f"{plan_file}: cell {cell!r} names no experiment")
        seeds = spec.get("seeds") if isinstance(spec, dict) else None
        if type(seeds) is not int or not 1 <= seeds <= 100:
            raise ValueError(f"{plan_file}: cell {cell!r} has no whole number of seeds in 1..100")
        check_file_overrides([spec.get("override")], f"{plan_file} (cell {cell})", applied=True)
        check_trains_row(plan_file, cell, spec["override"], p["profile"], tables)
        wall = spec.setdefault("wall_time_s", JOB_SECONDS.get(p["profile"], JOB_SECONDS["long"]))
        if isinstance(wall, bool) or not isinstance(wall, int | float) or not 0 < wall < 1e7:
            raise ValueError(
                f"{plan_file}: cell {cell!r} has no wall_time_s in seconds (a number in (0, 1e7)),"
                f" got {wall!r}"
            )
    return p


@cache
def swept_key(experiment: str) -> str | None:
    """The one key `experiment`'s yaml sweeps (hydra.sweeper.params: `row`, `kb`,
    `implication.s`), None where it sweeps none or several (read once a process, as
    cell_configs.own_budget reads the yaml)."""
    spec = OmegaConf.load(cell_configs.CONF / "experiment" / f"{experiment}.yaml")
    params = OmegaConf.select(spec, "hydra.sweeper.params", default=None) or {}
    return next(iter(params)) if len(params) == 1 else None


def check_trains_row(
    plan_file: Path, cell: str, override: str, profile: str, tables: Mapping[str, PaperTable]
) -> None:
    """A ValueError unless `override` trains `cell`'s row of its table (of `tables`): it sets
    the key the experiment sweeps (any other would train every row) and the config it composes
    at `profile` is the one the renderer holds the row's records to (cells.row_configuration),
    whatever key the table's rows use (`kb.name`, `implication.s`, `row`)."""
    experiment, row = cell.split("/", 1)
    table = tables.get(experiment)
    if table is None or row not in table.keys():
        valid = table.keys() if table is not None else []
        raise ValueError(f"{plan_file}: cell {cell!r} names no row of a table; valid: {valid}")
    key, _, value = override.partition("=")
    swept = swept_key(experiment)
    trains = cell_configs.cell_config(experiment, profile, key, value) if key == swept else None
    if trains is None or cell_hash(trains) != row_configuration(table, profile, row):
        raise ValueError(
            f"{plan_file}: cell {cell!r}: the override {override[:80]!r} trains no run of row "
            f"{row!r} (it must set `{swept}`, the key {experiment} sweeps, to that row's value)"
        )
