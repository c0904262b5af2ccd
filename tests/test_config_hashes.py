"""Every job's config hash at profile quick is pinned (tests/data/config_hashes.json), so a
refactor that changes what a configuration resolves to, or how it is hashed, is caught."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dfl_bench.results import plan

FIXTURE = Path(__file__).parent / "data" / "config_hashes.json"


def hashes(records_dir: Path) -> dict[str, list[str]]:
    """{experiment: sorted config hashes of its jobs} at profile quick, seed 0."""
    jobs = plan.plan(plan.experiments(), "quick", 1, records_dir)
    found: dict[str, list[str]] = {}
    for job in jobs:
        found.setdefault(job.experiment, []).append(job.path.stem)
    return {name: sorted(found[name]) for name in sorted(found)}


@pytest.mark.slow
def test_config_hashes_are_unchanged(tmp_path):
    assert hashes(tmp_path) == json.loads(FIXTURE.read_text())
