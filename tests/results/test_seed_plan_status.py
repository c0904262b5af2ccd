"""`python -m dfl_bench.reproduction.seed_plan status`: the planned seeds whose records are ok."""

from __future__ import annotations

import json
from pathlib import Path

from dfl_bench.reproduction import plan, seed_plan

REPO = Path(__file__).resolve().parents[2]


def test_the_seed_plans_status_counts_the_planned_seeds_whose_records_are_ok(tmp_path, monkeypatch):
    monkeypatch.setattr(plan.os, "cpu_count", lambda: 2)  # two jobs run at once
    p = {
        "profile": "long",
        "cells": {
            "formulas/f1": {"seeds": 3, "override": "row=f1", "wall_time_s": 600.0},
            "formulas/f2": {"seeds": 2, "override": "row=f2", "wall_time_s": 900.0},
        },
    }
    jobs = plan.plan(["formulas"], "long", 4, tmp_path)
    record = json.loads(
        next((REPO / "results" / "records" / "formulas").glob("*.json")).read_text()
    )
    written = [
        ("f1", 0, "ok"),
        ("f1", 2, "ok"),
        ("f1", 3, "ok"),
        ("f2", 1, "failed"),
        ("f2", 0, "ok"),
    ]
    for row, seed, status in written:
        (job,) = [j for j in jobs if {f"row={row}", f"seed={seed}"} <= set(j.overrides)]
        job.path.parent.mkdir(parents=True, exist_ok=True)
        fields = {"status": status, "seed": seed, "config_hash": job.path.stem}
        job.path.write_text(json.dumps({**record, **fields}))
    done = seed_plan.progress(p, tmp_path)
    assert done == {"formulas/f1": (2, 3), "formulas/f2": (1, 2)}  # f1's seed 3 is not planned
    lines = seed_plan.status_lines(p, done, jobs=2)
    assert lines[:2] == ["  formulas/f1: 2 of 3 seeds", "  formulas/f2: 1 of 2 seeds"]
    assert lines[2] == (  # (600 + 900) s left at two jobs
        "[seed_plan] 3 of 5 planned runs finished; 0 of 2 cells complete; about 0.2 h of "
        "training left at 2 job(s)"
    )
