"""Records brought to today's form once (lifecycle/migrate.py): what a migrated record says is
what trained, it lands in the cell its job composes today, and every committed record is
already in today's form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dfl_bench.lifecycle import migrate, records
from dfl_bench.paths import REPO_DIR
from dfl_bench.results import cells

OLD = Path(__file__).resolve().parents[1] / "data" / "old_records"


def old_record() -> dict:
    """A committed record of the `minute` budget as written before its optimizer moved: its
    config said lr 0.001 under `optimizer`, and 0.002 with a cosine under `profile.optimizer`."""
    return json.loads((OLD / "budget_optimizer_in_profile.json").read_text())


def test_a_budgets_optimizer_moves_into_the_optimizer_that_trained():
    record = old_record()
    assert record["config"]["optimizer"]["lr"] == 0.001  # what it said
    new = migrate.migrate_record(record)
    assert new["config"]["optimizer"] == {"name": "adam", "lr": 0.002, "cosine_to": 0.1}
    assert "optimizer" not in new["config"]["profile"]
    assert new["config_hash"] == records.config_hash(new["config"]) != record["config_hash"]
    assert migrate.migrate_record(new) == new  # once


@pytest.mark.slow  # composes the experiment's cell
def test_a_migrated_record_fills_the_cell_its_job_composes_today():
    new = migrate.migrate_record(old_record())
    today = cells.cell_config("mnist_addition", "minute", "row", "product_sum")
    assert today is not None and today["optimizer"]["lr"] == 0.002
    assert records.cell_hash(new["config"]) == records.cell_hash(today)


def test_every_committed_record_is_in_todays_form():
    paths = sorted((REPO_DIR / "results").rglob("*.json"))
    checked = 0
    for path in paths:
        record = json.loads(path.read_text())
        if not (isinstance(record, dict) and isinstance(record.get("config"), dict)):
            continue
        checked += 1
        assert "optimizer" not in (record["config"].get("profile") or {}), path
        assert migrate.migrate_record(record) == record, path
    assert checked >= 900


def test_a_folder_is_migrated_under_new_names_and_a_copy_follows_its_source(tmp_path):
    record = old_record()
    source = tmp_path / "mnist_addition" / f"{record['config_hash']}.json"
    records.write_record(source, record)
    copy = {**record, "experiment": "other", "reused_from": f"mnist_addition/{source.name}"}
    records.write_record(tmp_path / "other" / source.name, copy)
    moved = migrate.migrate_folder(tmp_path)
    new_name = f"{records.config_hash(migrate.migrate_config(record['config']))}.json"
    assert sorted((old.name, new.name) for old, new in moved) == [(source.name, new_name)] * 2
    assert not source.exists()
    again = records.read_record(tmp_path / "other" / new_name)
    assert again is not None and again["reused_from"] == f"mnist_addition/{new_name}"
    assert migrate.migrate_folder(tmp_path) == []  # nothing left to move


def test_a_missing_folder_is_an_error(tmp_path, capsys):
    assert migrate.main([str(tmp_path / "typo")]) == 2
    assert "is no folder" in capsys.readouterr().err


def test_a_run_evaluated_on_its_validation_split_alone_names_that_accuracy_validation():
    committed = REPO_DIR / "results" / "records" / "mnist_addition_budget"
    before = json.loads(next(committed.glob("*.json")).read_text())
    old = {  # as it was written: the held-out split's accuracies under the test's names
        **{k: v for k, v in before.items() if not k.startswith(("validation", "best_validation"))},
        "test_accuracy": before["validation_accuracy"],
        "best_test_accuracy": before["best_validation_accuracy"],
        "digit_accuracy": before["validation_digit_accuracy"],
    }
    new = migrate.migrate_record(old)
    assert new["validation_accuracy"] == old["test_accuracy"] and new["test_accuracy"] is None
    assert new["best_validation_accuracy"] == old["best_test_accuracy"]
    assert new == before and records.invalid(new) is None
    assert migrate.migrate_record(new) == new
