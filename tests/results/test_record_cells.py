"""Every committed record keeps counting for its cell: its file name is its config's hash, and
the cell it fills (table, profile, row, configuration) is the one pinned in
tests/data/record_cells.json, written before `problem` became `kb`, read through the one
migration of the records since (tests/data/record_renames.json: each record's old place and
configuration, and its new). A record committed later is not in the fixture and not checked by
the second test.

Regenerate (only for a deliberate change of which cell a record fills):
    python -m tests.results.test_record_cells
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from dfl_bench.lifecycle import records
from dfl_bench.paths import REPO_DIR
from dfl_bench.results.cells import record_keys, trained_rows
from dfl_bench.results.load import load_records
from dfl_bench.results.paper import load_paper

ROOT = REPO_DIR / "results" / "records"
FIXTURE = Path(__file__).resolve().parents[1] / "data" / "record_cells.json"
RENAMES = FIXTURE.with_name("record_renames.json")


def record_cells(root: Path) -> dict[str, list[list[str]]]:
    """{record path under root: [[table, profile, row, configuration], ...]} for every record
    a table counts (a record of a row two tables share is in both)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_records(root)
    out: dict[str, list[list[str]]] = {}
    for name, paper in load_paper().tables.items():
        for profile in sorted(frame["profile"].dropna().unique()):
            runs = frame[(frame["experiment"] == paper.experiment) & (frame["profile"] == profile)]
            if runs.empty:
                continue
            keys = trained_rows(paper, profile, runs, record_keys(runs, paper))
            for path, key, configuration in zip(
                runs["path"], keys, runs["configuration"], strict=True
            ):
                place = Path(path).relative_to(root).as_posix()
                out.setdefault(place, []).append([name, profile, key, configuration])
    return out


def test_every_committed_record_is_named_by_its_configs_hash():
    paths = sorted(ROOT.rglob("*.json"))
    assert len(paths) >= 300
    for path in paths:
        config = json.loads(path.read_text())["config"]
        assert "problem" not in config and "name" in config["kb"], path
        assert records.config_hash(config) == path.stem, path


def pinned_today() -> dict[str, list[list[str]]]:
    """The pinned cells at the records' places and configurations after the migration."""
    renames = json.loads(RENAMES.read_text())
    places, configurations = renames["records"], renames["configurations"]
    return {
        places.get(path, path): [[*cell[:3], configurations.get(cell[3], cell[3])] for cell in held]
        for path, held in json.loads(FIXTURE.read_text()).items()
    }


def test_the_migration_moved_each_pinned_record_and_configuration_once():
    renames = json.loads(RENAMES.read_text())
    for mapping in (renames["records"], renames["configurations"]):
        assert len(set(mapping.values())) == len(mapping)  # no two became one
    assert set(json.loads(FIXTURE.read_text())) <= set(renames["records"])
    assert all((ROOT / place).is_file() for place in renames["records"].values())


@pytest.mark.slow  # composes every row's config at every profile (a minute and a half)
def test_every_pinned_record_fills_the_cell_it_filled():
    pinned = pinned_today()
    now = record_cells(ROOT)
    assert {path: now.get(path) for path in pinned} == pinned


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(record_cells(ROOT), indent=0, sort_keys=True) + "\n")
