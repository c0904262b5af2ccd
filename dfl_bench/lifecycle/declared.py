"""What an experiment declares and a command line may not edit: its rows (`rows.*`) and the
tables its rows read their values from (ROW_TABLES: `families.*`, `nets.*`), its stages
(`stages.*`) and the values it takes from its stage (`task.validation: ${stages[${stage}]}`),
its rule (`rule.*`), and the seeds of the final stage its rule declares (`rule.final.seeds`:
the choice's own seeds are not final seeds). Each refusal is one line naming what to do instead,
the rule of both the command line's preflight and each job's check (`check_declared`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from dfl_bench.lifecycle.guards import row_owner, row_refusal
from dfl_bench.lifecycle.sweep import search_path

# The tables an experiment's rows read their values from, by the row's own value
# (`tnorm: ${families[${rows[${row}].family}].tnorm}`, `net: ${nets[${rows[${row}].net}]}`) or
# whole (`rows: ${families}`): editing one edits what its rows train under their names.
ROW_TABLES = ("families", "nets")
# An experiment's declarations: read, never overridden (and never a setting beside a table's
# cells: results/compare.py).
DECLARED = ("rows", *ROW_TABLES, "stages", "rule")
STAGED = "stage"  # a value an experiment takes from its stage: `${stages[${stage}]}`


def seeds_of(declared: Mapping[str, Any]) -> list[int]:
    """A rule's seeds as declared (`seeds:`): a count (0..n-1) or a list of seeds.

    >>> seeds_of({"seeds": 3}), seeds_of({"seeds": [3, 4, 5]})
    ([0, 1, 2], [3, 4, 5])
    """
    seeds = declared["seeds"]
    return list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]


def row_names(raw: Mapping[str, Any]) -> list[str]:
    """The rows of the unresolved config `raw`: its `rows`' keys, or those of the table that
    `rows` is whole (`rows: ${families}`).

    >>> row_names({"rows": "${families}", "families": {"godel": {}, "product": {}}})
    ['godel', 'product']
    """
    rows = raw.get("rows")
    whole = re.fullmatch(r"\$\{(\w+)\}", rows) if isinstance(rows, str) else None
    table = raw.get(whole.group(1)) if whole else rows
    return list(table) if isinstance(table, Mapping) else []


def declaration_refusal(raw: Mapping[str, Any], key: str, line: str) -> str | None:
    """Why override `line` (its key `key`) cannot apply to the unresolved config `raw`: it edits
    one of the experiment's DECLARED mappings, or a value the experiment takes from its stage;
    None where it does neither."""
    name = raw.get("experiment_name")
    top = key.lstrip("+~").split(".")[0]
    stages = " or ".join(f"stage={s}" for s in raw.get("stages") or ())
    if top in DECLARED and raw.get(top) is not None:
        rows = f"pick another row (valid rows: {row_names(raw)}), or run without +experiment"
        instead = {
            **dict.fromkeys(("rows", *ROW_TABLES), f"{rows} and set the values yourself"),
            "stages": f"pick a stage ({stages}), or run without +experiment and set the values "
            "yourself",
            "rule": "leave it out (the rule was declared before the runs)",
        }[top]
        read = " (its rows read their values from it)" if top in ROW_TABLES else ""
        return f"{line} is refused: experiment {name!r} declares its {top}{read}; {instead}"
    owned = row_owner(raw, key, STAGED)
    if owned is None:
        return None
    return (
        f"{line} is refused: experiment {name!r} sets {owned} from its stage (stages: "
        f"{raw.get('stages')}); pick a stage ({stages}), or run without +experiment and set "
        f"{owned} yourself"
    )


def final_seed_refusal(cfg: DictConfig) -> str | None:
    """Why the job `cfg` may not train: its stage is its rule's final stage and its seed is not
    one of the final seeds the rule declares; None otherwise."""
    final = OmegaConf.select(cfg, "rule.final", default=None)
    if final is None or cfg.get("stage") != final.get("stage") or "seeds" not in final:
        return None
    seeds = seeds_of(OmegaConf.to_container(final, resolve=True))  # type: ignore[arg-type]
    if cfg.get("seed") in seeds:
        return None
    return (
        f"seed={cfg.get('seed')} under stage={cfg.get('stage')}: experiment "
        f"{cfg.get('experiment_name')!r} declares its final seeds {seeds} (rule.final.seeds: "
        "its other seeds took part in the choice); pick one of them"
    )


def experiment_declaration(name: str, cfg: Mapping[str, Any]) -> dict[str, Any]:
    """Experiment `name`'s yaml as written, found on the job's search path (no override
    applied: a value the command line set was an interpolation of its row or stage there), with
    the job's `row` and name, and the ROW_TABLES its defaults list composes in
    (`/families: parametric`) as the job's `cfg` holds them."""
    with search_path():
        loaded = GlobalHydra.instance().config_loader().repository.load_config(f"experiment/{name}")
    raw = {} if loaded is None else OmegaConf.to_container(loaded.config, resolve=False)
    defaults = (loaded.defaults_list if loaded is not None else None) or ()
    groups = [str(getattr(d, "group", "")).lstrip("/") for d in defaults]
    given = isinstance(cfg, DictConfig)  # a job's composed config
    tables = {t: cfg[t] for t in ROW_TABLES if t in groups and given and cfg.get(t) is not None}
    composed = OmegaConf.to_container(OmegaConf.create(tables), resolve=False)
    return {**composed, **raw, "row": cfg.get("row"), "experiment_name": cfg.get("experiment_name")}  # type: ignore[dict-item]


def declared_refusal(raw: Mapping[str, Any], overrides: Sequence[str]) -> str | None:
    """Why one of `overrides` edits what the experiment of the unresolved config `raw` declares
    (`declaration_refusal`) or takes from its row (`row_owner`): one line, or None (`experiment`,
    `row` and `hydra.*` pick the job)."""
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key, line = override.key_or_group, override.input_line
        if key.lstrip("+~").split(".")[0] in ("experiment", "row") or key.startswith("hydra"):
            continue
        refused = declaration_refusal(raw, key, line)
        owned = row_owner(raw, key)
        if refused is not None or owned is not None:
            return refused or row_refusal(line, raw, owned)  # type: ignore[arg-type]
    return None


def check_declared(cfg: DictConfig, overrides: Sequence[str]) -> None:
    """A ValueError (one line) for an override of what the experiment the overrides name
    declares or takes from its row (`declared_refusal`), or for a final stage's undeclared seed
    (`final_seed_refusal`)."""
    parsed = OverridesParser.create().parse_overrides(list(overrides))
    named = [o.value() for o in parsed if o.key_or_group == "experiment" and not o.is_delete()]
    raw = experiment_declaration(str(named[-1]), cfg) if named else {}
    refused = declared_refusal(raw, overrides) or final_seed_refusal(cfg)
    if refused is not None:
        raise ValueError(refused)
