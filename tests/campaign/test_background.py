"""`python -m campaign.background`: each background folder with its commit, whether its lock is
held, the finished records a harvest would bring (ok or diverged, not those committed or cut
off) and its log's last line."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from campaign import background
from dfl_bench.lifecycle import records
from dfl_bench.tasks import contract

REPO = Path(__file__).resolve().parents[2]


def _folder(root: Path, name: str, commit: str) -> Path:
    folder = root / name
    (folder / "records").mkdir(parents=True)
    (folder / "commit").write_text(commit + "\n")
    (folder / "run.lock").touch()
    return folder


def _copy(record: dict, folder: Path, seed: int, **fields) -> Path:
    """`record` as another seed's run at its own hash under `folder`/records."""
    record = json.loads(json.dumps(record))
    record["config"]["seed"] = record["seed"] = seed
    record["config"]["records_dir"] = str(folder / "records")
    record["overrides"] = ["row=f1", f"records_dir={folder / 'records'}", "logger=none"]
    record["config_hash"] = records.config_hash(record["config"])
    record.update(fields)
    path = folder / "records" / "formulas" / f"{record['config_hash']}.json"
    return records.write_record(path, record)


def test_each_folder_says_its_state_its_records_to_harvest_and_the_command(
    tmp_path, capsys, monkeypatch
):
    committed = REPO / "results" / "records"
    first = next((committed / "formulas").glob("*.json"))
    record = json.loads(first.read_text())
    commit = record["git_commit"]
    busy = _folder(tmp_path, "finals", commit)
    _folder(tmp_path, "search", "not a commit; rm -rf x")
    (busy / "records" / "formulas").mkdir()
    (busy / "records" / "formulas" / first.name).write_text(first.read_text())  # committed
    _copy(record, busy, 901)
    _copy(record, busy, 902, status="failed", reason=contract.nonfinite_reason(5, "dfl"))
    _copy(record, busy, 903, status="failed", reason="no final evaluation: ended at step 5")
    (busy / "finals.log").write_text("old\n[stage]\tbn_deep_n15 seed=0\n\n")
    monkeypatch.setattr(background, "DIVERGED", ("formulas",))  # a rule that counts them
    lock = os.open(busy / "run.lock", os.O_RDONLY)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as make's flock -n holds it
    try:
        assert background.main(["--root", str(tmp_path), "--records-dir", str(committed)]) == 0
    finally:
        os.close(lock)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"finals ({commit[:7]}, training): 2 record(s) to harvest (formulas 2); "
        "finals.log: [stage] bn_deep_n15 seed=0"
    )
    assert out[1] == f"  make addition-harvest ADDITION_DIR={busy} ADDITION_COMMIT={commit}"
    assert out[2] == "search (?, stopped): cannot be harvested: no commit id; -"
    assert len(out) == 3
    monkeypatch.setattr(background, "DIVERGED", ())
    (busy / "commit").write_text("f" * 40)  # the records trained at another commit
    found = background.folders(tmp_path, committed)[0]
    assert found.new == {} and f"trained at {commit[:12]}" in str(found.refused)


def test_the_harvest_target_brings_the_diverged_records_of_the_rules_that_count_them():
    makefile = (REPO / "Makefile").read_text()
    line = next(x for x in makefile.splitlines() if x.startswith("HARVEST_DIVERGED ?="))
    assert line.split("?=")[1].strip().split(",") == list(background.DIVERGED)
