"""Commit probes: which overrides a probe keeps, when commits count as training alike, and the
notes a table gives a cell of several commits."""

from __future__ import annotations

import json

from dfl_bench.results import commit_probe, render
from dfl_bench.results.agreement import agreement
from dfl_bench.results.load import load_records
from dfl_bench.results.tables import build_table
from tests.results.test_results import PAPER, write


def test_a_probe_keeps_the_records_choices_and_sets_its_own_budget():
    overrides = ["row=godel", "+experiment=tnorms", "seed=2", "profile=long", "threads=2"]
    overrides += ["records_dir=results/records", "logger=none", "trainer=gpu", "problem=both"]
    args = commit_probe.probe_overrides(overrides)
    assert args[:3] == ["row=godel", "+experiment=tnorms", "problem=both"]
    assert args[3:] == list(commit_probe.PROBE)
    assert "seed=0" in args and "profile=long" not in args and "trainer=gpu" not in args


def test_commits_train_alike_only_when_every_probe_gave_the_same_numbers():
    a, b = {"numbers": {"cu_ant": 0.5, "test_accuracy": 0.9}}, {"numbers": {"cu_ant": 0.5}}
    assert commit_probe.same({"x": a, "y": dict(a)}) is True
    assert commit_probe.same({"x": a, "y": b}) is False
    assert commit_probe.same({"x": a, "y": {"error": "exit 1"}}) is None
    assert commit_probe.same({"x": a}) is None


def _table(tmp_path, probes):
    records = tmp_path / "records"
    write(records, "tnorms", "a", row="godel", seed=0, commit="aaa")
    write(records, "tnorms", "b", row="godel", seed=1, commit="bbb")
    frame = load_records(records)
    digest = frame["configuration"].iloc[0]
    if probes is not None:
        path = tmp_path / commit_probe.PROBES
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"cells": {digest: {"commits": probes}}}))
    table = build_table(PAPER.tables["tnorms"], frame, "quick", tmp_path)
    return table, render.markdown(table, agreement(table), [])


def test_a_cell_of_two_commits_is_a_warning_unless_its_probes_agree(tmp_path):
    same = {"numbers": {"cu_ant": 0.5}}
    table, text = _table(tmp_path / "unprobed", None)
    assert "may differ in training code: aaa, bbb" in text and table.mixed_commits
    table, text = _table(tmp_path / "alike", {"aaa": same, "bbb": same})
    assert not table.mixed_commits and "WARNING" not in text
    assert "commits aaa, bbb train the cell to the same numbers" in text
    table, text = _table(tmp_path / "differ", {"aaa": same, "bbb": {"numbers": {"cu_ant": 0.6}}})
    assert "WARNING: `godel` mixes commits that train it to different numbers" in text
    _, text = _table(tmp_path / "half", {"aaa": same})
    assert "may differ in training code" in text


DIRTY = {
    "seed": 2,
    "torch_threads": 1,
    "overrides": ["row=godel_R", "+experiment=same_symmetric", "seed=2", "profile=long"]
    + ["records_dir=results/records", "logger=wandb", "progress_bar=False"],
    "test_accuracy": 0.9593,
    "cons_ratio": 1.0,
}


def test_a_dirty_run_is_retrained_with_its_own_seed_profile_and_threads():
    args = commit_probe.retrain_overrides({**DIRTY, "torch_threads": 2})
    assert args[:4] == ["row=godel_R", "+experiment=same_symmetric", "seed=2", "profile=long"]
    assert args[4:] == ["threads=2", "logger=none", "progress_bar=false"]


def _fake_train(results):
    """train() answering a full run (seed=2 in its args) and a probe (seed=0) from `results`."""
    calls = []

    def train(commit, args):
        calls.append((commit, "seed=0" in args))
        return results["probe" if "seed=0" in args else "retrain"]

    return train, calls


def test_a_dirty_commit_counts_only_when_its_run_retrains_to_the_same_numbers(monkeypatch):
    probe = {"status": "ok", "test_accuracy": 0.5, "cons_ratio": 0.9}
    train, calls = _fake_train({"retrain": {**DIRTY, "status": "ok"}, "probe": probe})
    monkeypatch.setattr(commit_probe, "train", train)
    entry = commit_probe.probe("abc-dirty", DIRTY["overrides"], DIRTY)
    assert calls == [("abc", False), ("abc", True)]
    assert entry["numbers"] == {"test_accuracy": 0.5, "cons_ratio": 0.9}
    assert entry["retrained"]["equal"] and entry["retrained"]["seed"] == 2

    train, calls = _fake_train({"retrain": {**DIRTY, "cons_ratio": 0.99}, "probe": probe})
    monkeypatch.setattr(commit_probe, "train", train)
    entry = commit_probe.probe("abc-dirty", DIRTY["overrides"], DIRTY)
    assert calls == [("abc", False)] and "numbers" not in entry
    assert entry["error"] == "a dirty tree; its run retrained at abc: differ: cons_ratio"
    assert commit_probe.same({"abc-dirty": entry, "def": {"numbers": probe}}) is None
    assert not commit_probe._unprobed(entry)
    assert commit_probe._unprobed(commit_probe.probe("abc-dirty", DIRTY["overrides"]))


def test_a_cell_whose_dirty_run_retrained_alike_says_so(tmp_path):
    records = tmp_path / "records"
    write(records, "tnorms", "a", row="godel", seed=0, commit="aaa-dirty")
    write(records, "tnorms", "b", row="godel", seed=1, commit="bbb")
    frame = load_records(records)
    same = {"numbers": {"cu_ant": 0.5}}
    path = tmp_path / commit_probe.PROBES
    path.parent.mkdir(parents=True, exist_ok=True)
    cells = {"commits": {"aaa-dirty": same, "bbb": same}}
    path.write_text(json.dumps({"cells": {frame["configuration"].iloc[0]: cells}}))
    table = build_table(PAPER.tables["tnorms"], frame, "quick", tmp_path)
    text = render.markdown(table, agreement(table), [])
    assert "the dirty tree's run at aaa-dirty, retrained in full there" in text


def test_a_run_of_the_probes_retrains_a_dirty_commits_first_record_and_resumes(
    tmp_path, monkeypatch
):
    records = tmp_path / "records"
    for name, seed, commit in (("a", 0, "aaa"), ("b", 1, "bbb-dirty"), ("c", 2, "bbb-dirty")):
        path = write(records, "tnorms", name, row="godel", seed=seed, commit=commit)
        record = json.loads(path.read_text())
        record["overrides"] = ["row=godel", "+experiment=tnorms", f"seed={seed}"]
        path.write_text(json.dumps(record))
    trained = []

    def train(commit, args):
        trained.append((commit, next(a for a in args if a.startswith("seed="))))
        return {"status": "ok", "test_accuracy": 0.95, "cons_ratio": 0.1}

    monkeypatch.setattr(commit_probe, "train", train)
    out = tmp_path / "probes.json"
    known = commit_probe.run(records, out)
    assert sorted(trained) == [("aaa", "seed=0"), ("bbb", "seed=0"), ("bbb", "seed=1")]
    (cell,) = known["cells"].values()
    assert cell["same"] is True and cell["commits"]["bbb-dirty"]["retrained"]["seed"] == 1
    trained.clear()
    commit_probe.run(records, out)
    assert trained == []
