"""What a job refuses of the overrides given beside a table's row, read without torch: for a tool
that composes such a job's config itself and counts the records of it (results/compare.py's
--a-set and --b-set), so that it refuses what `python -m dfl_bench` refuses, by the job's own
checks of each override and the record gate's of the config they give.

    >>> print(setting_refusal(None, None, ["~kb.scope"], None))  # doctest: +ELLIPSIS
    ~kb.scope is refused: deleting kb.scope trains its code's default under another hash; ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import OverrideParseException

from dfl_bench.lifecycle.declared import declared_refusal, experiment_declaration
from dfl_bench.lifecycle.guards import check_deletions, check_override
from dfl_bench.lifecycle.preflight import unparsed
from dfl_bench.lifecycle.record_config import config_refusal
from dfl_bench.lifecycle.record_fields import unfit
from dfl_bench.lifecycle.sweep import job_config
from dfl_bench.tasks import DEFAULT
from dfl_bench.tasks.values import TASKS


def setting_refusal(
    experiment: str | None,
    row: str | None,
    overrides: Sequence[str],
    config: Mapping[str, Any] | None,
) -> str | None:
    """Why a job of experiment `experiment`'s row `row` (None: no +experiment) refuses
    `overrides`, given the resolved config they compose to (`config`; None where it does not
    compose): one line, or None. Each override as the job checks it (guards.check_override: a
    group its task does not read, an added key at the value meaning it is absent;
    declared.declared_refusal: what the experiment declares or takes from its row or stage;
    guards.check_deletions), then the config as a record's config is held to what a job takes
    (record_config.config_refusal, record_fields.unfit: the job's own checks of its values,
    the knowledge base's among them, and of overrides of operators no formula calls)."""
    task = str(((config or {}).get("task") or {}).get("name", DEFAULT))
    ignores = TASKS[task].ignores if task in TASKS else ()
    try:
        for override in OverridesParser.create().parse_overrides(list(overrides)):
            check_override(override, task, ignores)
        raw = declaration(experiment, row) if experiment else {}
        why = declared_refusal(raw, overrides)
        if why is not None:
            return why
        check_deletions(overrides)  # after the row's and the stage's, as a job checks it
    except OverrideParseException as err:
        return unparsed(err)
    except ValueError as err:
        return str(err)
    if config is None:
        return None
    return config_refusal(config, overrides) or unfit({"config": config})


def declaration(experiment: str, row: str | None) -> dict[str, Any]:
    """What experiment `experiment` declares, as a job of its row `row` reads it
    (declared.experiment_declaration of the job's composed config, no override applied)."""
    cfg = job_config([f"+experiment={experiment}", *([f"row={row}"] if row else [])])
    return experiment_declaration(experiment, cfg)


def by_key(overrides: Sequence[str]) -> dict[str, Override]:
    """Each override by the key Hydra parses it to (`+`, `++`, `~` aside; the last of a key, as
    Hydra applies them), its value parsed (`key='v'` and `key=v ` are `key=v`), so a check of
    them gives every spelling of one override one answer; one Hydra cannot parse is one
    ValueError line (preflight.unparsed)."""
    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
    except OverrideParseException as err:
        raise ValueError(unparsed(err)) from None
    return {override.key_or_group: override for override in parsed}
