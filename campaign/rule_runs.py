"""The runs a declared rule counts (`rule:` of conf/experiment/<experiment>.yaml, applied by
campaign/addition_budget.py, recipe_search.py and collapse_search.py): an experiment's ok
records of a row that trained the row's configuration at a stage as its jobs train it today
(`row_digest`: the cell hash, as the renderer's cells), of the seeds the rule declares for that
stage (`rule_seeds`). Another configuration filed under the row and stage (another rate, another
held-out share) or a seed the rule does not declare counts for nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from dfl_bench.lifecycle import records
from dfl_bench.lifecycle.declared import seeds_of
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.results import cell_configs
from dfl_bench.results.load import pooled
from dfl_bench.results.stats import MIN_SEEDS

SEARCH = "search"  # the stage of a row's candidate runs (the default where a yaml has none)


def declared(experiment: str) -> dict[str, Any]:
    """An experiment's yaml: its rows and its rule."""
    path = Path(CONFIG_DIR) / "experiment" / f"{experiment}.yaml"
    return OmegaConf.to_container(OmegaConf.load(path), resolve=False)  # type: ignore[return-value]


def row_digest(experiment: str, row: str, stage: str) -> str | None:
    """The cell hash of `experiment`'s `row` at `stage` (where its yaml has stages) as its jobs
    train it today (cell_configs.cell_config at its own budget); None where that does not
    compose."""
    staged = declared(experiment).get("stage") is not None
    also = (f"stage={stage}",) if staged else ()
    budget = cell_configs.own_budget(experiment)
    config = cell_configs.cell_config(experiment, budget, "row", row, also)
    return None if config is None else records.cell_hash(config)


# What a diverged run (records.diverged: its training turned non-finite, so it has no final
# accuracy) counts as where a rule counts every seed: its metrics, a collapsed run's.
DIVERGED = 0.0


def every_seed(frame: Any, experiment: str, metrics: Sequence[str],
               steps: Callable[[str], int | None], stage: str = SEARCH) -> Any:  # fmt: skip
    """The runs `counted` counts at `stage` that trained their row's whole `steps` (a function
    of the row) or diverged on the way (column `diverged`), each diverged run's `metrics` at
    DIVERGED. A run cut short otherwise counts for nothing."""
    runs = counted(frame, experiment, stage, diverged=True)
    runs.loc[runs["diverged"], list(metrics)] = DIVERGED
    whole = runs["row"].map(lambda row: steps(str(row))) == runs["steps"]
    return runs[runs["diverged"] | whole]


def complete(runs: int, seeds: int) -> bool:
    """Whether a row's `runs` decide a target or a comparison: one for each of the `seeds` it
    declares, and MIN_SEEDS at least.

    >>> complete(3, 3), complete(4, 5), complete(2, 2)
    (True, False, False)
    """
    return runs >= max(seeds, MIN_SEEDS)


def rule_seeds(experiment: str, stage: str = SEARCH) -> list[int]:
    """The seeds `experiment`'s rule declares for `stage`: its final stage's (`rule.final`)
    there, else the rule's own (`seeds_of`)."""
    rule = declared(experiment)["rule"]
    final = rule.get("final")
    return seeds_of(final if final and final["stage"] == stage else rule)


def counted(frame: Any, experiment: str, stage: str = SEARCH, diverged: bool = False) -> Any:
    """The runs of `frame` (results.load's records) the rule of `experiment` counts at `stage`:
    ok (or, given `diverged`, failed because training turned non-finite: records.diverged), of
    `stage`, of its declared seeds (`rule_seeds`), each of its row's configuration there
    (`row_digest`), once a seed as the tables count it (results.load.pooled), in seed order;
    given `diverged`, column `diverged` says which diverged."""
    mine = frame[frame["experiment"] == experiment]
    finished = mine["status"] == "ok"
    if diverged:
        flags = [records.diverged(r) for r in mine.to_dict("records")]
        mine = mine.assign(diverged=flags).astype({"diverged": bool})
        finished |= mine["diverged"]
    ok = mine[finished]
    ok = ok[ok["config"].map(lambda c: c.get("stage", SEARCH)) == stage]
    ok = ok[ok["seed"].isin(rule_seeds(experiment, stage))].sort_values("seed")
    own = {row: row_digest(experiment, str(row), stage) for row in set(ok["row"])}
    ok = ok[ok["row"].map(own) == ok["configuration"]].reset_index(drop=True)
    kept = [
        pooled(runs, configuration, profile, experiment).index
        for (_, configuration, profile), runs in ok.groupby(["row", "configuration", "profile"])
    ]
    return ok[ok.index.isin([i for index in kept for i in index])]
