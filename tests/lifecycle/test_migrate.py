"""A record of an older form in today's (lifecycle/migrate.py, the steps a harvest and the
loader read older forms through): what a migrated record says is what trained, it lands in the
cell its job composes today, and every committed record is already in today's form. Rewriting a
folder in place is campaign/migrate_records.py's (tests/campaign/test_migrate_records.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dfl_bench.lifecycle import migrate, records
from dfl_bench.paths import REPO_DIR
from dfl_bench.results import cell_configs

OLD = Path(__file__).resolve().parents[1] / "data" / "old_records"


def old_record() -> dict:
    """A committed record of the `minute` budget as written before its optimizer moved: its
    config said lr 0.001 under `optimizer`, and 0.002 with a cosine under `profile.optimizer`."""
    return json.loads((OLD / "budget_optimizer_in_profile.json").read_text())


def test_a_budgets_optimizer_moves_into_the_optimizer_that_trained():
    record = old_record()
    assert record["config"]["optimizer"]["lr"] == 0.001  # what it said
    new = migrate.migrate_record(record)
    assert new["config"]["optimizer"] == {"name": "adam", "lr": 0.002, "fused": True}  # its
    # cosine_to (0.1) was never stepped: it trained at the constant 0.002 (unstepped_schedule)
    assert "optimizer" not in new["config"]["profile"]
    assert new["config_hash"] == records.config_hash(new["config"]) != record["config_hash"]
    assert migrate.migrate_record(new) == new  # once


@pytest.mark.slow  # composes the experiment's cell
def test_a_migrated_record_fills_the_cell_its_job_composes_today():
    new = migrate.migrate_record(old_record())
    today = cell_configs.cell_config("mnist_addition", "minute", "row", "product_sum")
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


def old_form(config: dict) -> dict:
    """`config` as a record made before the `kb` group and the added keys wrote it: the
    knowledge base under `problem` (its formulas under `problem.kb`), each added key at the
    value it was added with left out, the provenance in the old names."""
    out = json.loads(json.dumps(config))
    kb = out.pop("kb")
    out["problem"] = {
        "name": kb.pop("name"),
        "w_dfl": kb.pop("w_dfl"),
        **({"kb": kb} if kb else {}),
    }
    for group, value in (("task", {"name": "mnist_kb"}), ("net", {"name": "paper"})):
        if {k: v for k, v in out[group].items() if k != "_target_"} == value:
            del out[group]
    if out.get("augment") == {"degrees": 0.0, "shift": 0.0}:
        del out["augment"]
    for group, key, value in [
        ("model", "ntn_bias", False),
        ("optimizer", "fused", True),
        *((kind, "eps", 0.0) for kind in ("tnorm", "tconorm", "implication", "forall", "exists")),
    ]:
        node = out.get(group)
        if (
            isinstance(node, dict)
            and node.get(key) is value
            or (isinstance(node, dict) and key == "eps" and node.get(key) == value)
        ):
            del node[key]
    if isinstance(out.get("provenance"), dict):
        out["provenance"] = {
            k.replace("kb.w_dfl", "problem.w_dfl").replace("kb.name", "problem.name"): v
            for k, v in out["provenance"].items()
        }
    return out


def test_a_paper_task_record_in_its_oldest_form_migrates_to_its_committed_config_and_place():
    """Every committed record of the paper's task, written back in the form of the oldest
    records (`problem`, no added keys), migrates to the config it holds and so to its place."""
    checked = 0
    for path in sorted((REPO_DIR / "results" / "records").glob("*/*.json")):
        record = json.loads(path.read_text())
        config = record["config"]
        if config["task"]["name"] != "mnist_kb" or "_target_" in config["task"]:
            continue  # a record with code keys was written after the added keys
        old = old_form(config)
        assert "kb" not in old and "fused" not in (old["optimizer"]), path
        new = migrate.migrate_config(old)
        assert records.config_hash(new) == path.stem, path
        checked += 1
    assert checked >= 300


def test_each_added_key_is_written_only_where_todays_configuration_has_it():
    old = {
        "seed": 0,
        "problem": {"name": "same", "w_dfl": 10.0},
        "model": {"ntn_k": 10},
        "optimizer": {"name": "sgd", "lr": 0.1},
        "tnorm": {"name": "yager", "p": 1.5},
        "tconorm": {"name": "product"},
        "implication": {"name": "yager_s", "p": 1.5, "eps": 1e-6},
    }
    new = migrate.migrate_config(old)
    assert new["kb"] == {"name": "same", "w_dfl": 10.0} and "problem" not in new
    assert new["task"] == {"name": "mnist_kb"} and new["net"] == {"name": "paper"}
    assert new["augment"] == {"degrees": 0.0, "shift": 0.0}
    assert new["model"] == {"ntn_k": 10, "ntn_bias": False}
    assert new["optimizer"] == old["optimizer"]  # SGD has no fused kernel option
    assert new["tnorm"]["eps"] == 0.0 and "eps" not in new["tconorm"]
    assert new["implication"]["eps"] == 1e-6  # a value it trained with stays
    assert migrate.migrate_config(new) == new
    addition = migrate.migrate_config({**old, "task": {"name": "mnist_addition", "digits": 2}})
    assert addition["task"] == {
        "name": "mnist_addition", "digits": 2, "valuation": "log", "validation": 0.0,
        "loss": "exact",
    }  # fmt: skip


def test_a_schedule_no_step_followed_leaves_the_config_at_the_rate_that_trained():
    old = {"seed": 0, "optimizer": {"name": "adam", "lr": 0.001, "fused": True, "cosine_to": 0.01}}
    new = migrate.unstepped_schedule(old)
    assert new["optimizer"] == {"name": "adam", "lr": 0.001, "fused": True}
    today = {"seed": 0, "optimizer": {"name": "adam", "lr": 0.001, "cosine_final": 0.01}}
    assert migrate.unstepped_schedule(today) == today  # the schedule a run now follows stays
    assert not any(
        "cosine_to" in (json.loads(p.read_text())["config"].get("optimizer") or {})
        for p in (REPO_DIR / "results" / "records").glob("*/*.json")
    )


def _cli(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m dfl_bench.lifecycle.migrate ARGS` run in `folder`."""
    env = {**os.environ, "PYTHONPATH": str(REPO_DIR)}
    command = [sys.executable, "-m", "dfl_bench.lifecycle.migrate", *args]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (("--help",), 0, "usage: python -m dfl_bench.lifecycle.migrate [--help]: the steps that "),
        (("-h",), 0, "usage: python -m dfl_bench.lifecycle.migrate [--help]"),
        (("--in-place",), 2, "[migrate] unknown option '--in-place': it takes none but --help ("),
        (("records",), 2, "[migrate] it takes no argument but --help, got 'records' ("),
        ((), 2, "[migrate] nothing to do: it takes no argument but --help ("),
    ],
)
def test_the_modules_command_line_says_what_it_is_and_touches_no_record(tmp_path, args, code, said):
    """`--help` prints its usage, exit 0; an unknown option, a folder or nothing is one line,
    exit 2, naming the tool that rewrites a folder; no record is read or written."""
    record = tmp_path / "records" / "formulas" / "x.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps(old_record()))
    before = record.read_bytes()
    done = _cli(tmp_path, *args)
    out, err = (done.stdout, done.stderr) if code == 0 else (done.stderr, done.stdout)
    assert done.returncode == code and out.startswith(said) and not err
    assert len(out.splitlines()) == 1 and "python -m campaign.migrate_records DIR" in out
    assert record.read_bytes() == before and sorted(tmp_path.rglob("*")) == [
        tmp_path / "records",
        tmp_path / "records" / "formulas",
        record,
    ]
