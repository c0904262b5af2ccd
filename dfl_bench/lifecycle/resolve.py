"""A job's config as plain data: its table row checked and interpolated in, `rows`/`families`
dropped, its provenance merged (light: Hydra and OmegaConf only, so the planner and the results
module resolve configs without the trainer)."""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from dfl_bench.lifecycle.provenance import job_provenance


def resolved_config(cfg: DictConfig) -> dict[str, Any]:
    """The job's config as plain data, its table row (if any) checked and interpolated in, and
    its `provenance` (the experiment's, updated by its row's; `dfl_bench.lifecycle.provenance`)."""
    rows = cfg.get("rows") or {}
    if rows and cfg.get("row") not in rows:
        raise ValueError(
            f"row={cfg.get('row')!r} is not a row of experiment {cfg.experiment_name!r}; "
            f"valid rows: {list(rows)}"
        )
    config = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    assert isinstance(config, dict)
    config.pop("rows", None)
    config.pop("families", None)
    row_provenance = config.pop("row_provenance", None)
    config["provenance"] = job_provenance(
        config.get("provenance"), row_provenance, config.get("row"), config
    )
    return config
