"""This repository's records brought to today's form once, in place (campaign/migrate_records.py,
through the framework's steps, dfl_bench/lifecycle/migrate.py): a folder is rewritten under its
configs' hashes, a copy follows its source, and every committed record is already in today's
form, loads and counts from its own place."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from campaign import migrate_records
from dfl_bench.lifecycle import records
from dfl_bench.lifecycle.migrate import migrate_config, shim_hash
from dfl_bench.paths import REPO_DIR
from dfl_bench.results.load import RecordWarning, load_records

ROOT = REPO_DIR / "results" / "records"
OLD = Path(__file__).resolve().parents[1] / "data" / "old_records"


def old_record() -> dict:
    """A committed record of the `minute` budget as written before its optimizer moved (the
    form tests/lifecycle/test_migrate.py migrates step by step)."""
    return json.loads((OLD / "budget_optimizer_in_profile.json").read_text())


def test_a_folder_is_migrated_under_new_names_and_a_copy_follows_its_source(tmp_path):
    record = old_record()
    source = tmp_path / "mnist_addition" / f"{record['config_hash']}.json"
    records.write_record(source, record)
    other = {**record["config"], "experiment_name": "other"}  # its job's: not hashed
    copy = {**record, "experiment": "other", "config": other}
    copy["reused_from"] = f"mnist_addition/{source.name}"
    records.write_record(tmp_path / "other" / source.name, copy)
    moved = migrate_records.migrate_folder(tmp_path)
    new_name = f"{records.config_hash(migrate_config(record['config']))}.json"
    assert sorted((old.name, new.name) for old, new in moved) == [(source.name, new_name)] * 2
    assert not source.exists()
    again = records.read_record(tmp_path / "other" / new_name)
    assert again is not None and again["reused_from"] == f"mnist_addition/{new_name}"
    assert migrate_records.migrate_folder(tmp_path) == []  # nothing left to move


def test_a_missing_folder_is_an_error(tmp_path, capsys):
    assert migrate_records.main([str(tmp_path / "typo")]) == 2
    assert "is no folder" in capsys.readouterr().err


def test_a_frozen_checkouts_record_whose_config_is_today_is_renamed_to_todays_hash(tmp_path):
    """A record made before the hash covered the added keys (its config spells them, its name
    the hash of then) keeps its config and moves to the name that config hashes to today."""
    committed = next((ROOT / "mnist_addition_frontier_nets").glob("*"))
    record = json.loads(committed.read_text())
    old = tmp_path / "mnist_addition_frontier_nets" / f"{shim_hash(record['config'])}.json"
    assert old.name != committed.name
    records.write_record(old, {**record, "config_hash": old.stem})
    assert migrate_records.migrate_folder(tmp_path) == [(old, old.with_name(committed.name))]
    assert records.read_record(old.with_name(committed.name)) == record


def test_every_committed_record_is_left_as_it_is_and_counts_from_its_own_place(tmp_path):
    """The migration ran once: over a copy of results/records it renames and rewrites nothing,
    and the loader counts every committed record, each from its own place
    (`<experiment>/<config hash>.json`, so for the configuration its config composes), naming
    none as a copy, a misplaced record or one of an older form."""
    copy = tmp_path / "records"
    shutil.copytree(ROOT, copy)
    before = {path.relative_to(copy): path.read_bytes() for path in copy.rglob("*.json")}
    assert len(before) >= 1000
    assert migrate_records.migrate_folder(copy) == []
    assert {path.relative_to(copy): path.read_bytes() for path in copy.rglob("*.json")} == before
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecordWarning)
        warnings.filterwarnings("ignore", ".*one configuration and seed trained", RecordWarning)
        frame = load_records(ROOT)
    assert sorted(Path(p).relative_to(ROOT) for p in frame["path"]) == sorted(before)
    for place, experiment, run in zip(
        frame["path"], frame["experiment"], frame["run"], strict=True
    ):
        assert Path(place) == ROOT / experiment / f"{run}.json", place


def test_two_records_that_would_become_one_stop_the_migration_before_it_writes(tmp_path):
    """Two older forms of one run (its numbers differ) land on one name: the migration refuses
    both, naming them, and leaves each file as it was (one was deleted before)."""
    record = old_record()
    first = tmp_path / "mnist_addition" / f"{record['config_hash']}.json"
    records.write_record(first, {**record, "test_accuracy": 0.2})
    today = migrate_config(record["config"])  # the run in today's form, named as before 837a2fc
    second = first.with_name(f"{shim_hash(today)}.json")
    twin = {**record, "config": today, "test_accuracy": 0.3, "config_hash": second.stem}
    records.write_record(second, twin)
    before = {p: p.read_text() for p in (first, second)}
    with pytest.raises(ValueError, match="would both become"):
        migrate_records.migrate_folder(tmp_path)
    assert {p: p.read_text() for p in (first, second)} == before


def test_a_record_whose_config_was_edited_under_its_name_is_named_and_left_as_it_is(
    tmp_path, capsys
):
    """A record whose config hashes neither today nor as before 837a2fc to its name (kb.w_dfl
    edited under a committed record's name) is another configuration's numbers: left byte for
    byte and named, while the folder's older-form record still moves."""
    committed = next((ROOT / "default").glob("*.json"))
    record = json.loads(committed.read_text())
    record["config"]["kb"]["w_dfl"] = 5.0
    edited = tmp_path / "default" / committed.name
    edited.parent.mkdir()
    edited.write_text(json.dumps(record))
    older = old_record()
    source = tmp_path / "mnist_addition" / f"{older['config_hash']}.json"
    records.write_record(source, older)
    before = edited.read_bytes()
    moved = migrate_records.migrate_folder(tmp_path)
    assert [old for old, _ in moved] == [source]
    assert edited.read_bytes() == before and sorted(edited.parent.iterdir()) == [edited]
    err = capsys.readouterr().err
    assert f"{edited}: left as it is (its config hashes to " in err and committed.stem in err


def test_the_command_exits_2_when_it_left_a_file_as_it_was(tmp_path, capsys):
    """A folder with a file that is no record: the others migrate, the file stays, and the exit
    status says the folder was not all brought to today's form."""
    older = old_record()
    source = tmp_path / "mnist_addition" / f"{older['config_hash']}.json"
    records.write_record(source, older)
    junk = tmp_path / "mnist_addition" / "junk.json"
    junk.write_text("[1, 2")
    assert migrate_records.main([str(tmp_path)]) == 2
    assert junk.read_text() == "[1, 2" and not source.exists()
    assert "1 file(s) left as they were" in capsys.readouterr().err
    junk.unlink()
    assert migrate_records.main([str(tmp_path)]) == 0
