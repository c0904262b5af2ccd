"""Run records: the config hash, the contract fields and atomic writes."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jobs import whole_config

from dfl_bench.lifecycle import origin, records
from dfl_bench.lifecycle.records import RECORD_FIELDS

leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text())
configs = st.dictionaries(
    st.text(min_size=1).filter(lambda k: k not in records.NOT_HASHED),
    st.recursive(leaves, lambda inner: st.dictionaries(st.text(), inner, max_size=4), max_leaves=8),
    min_size=1,
    max_size=6,
)


def shuffled(d):
    """The same mapping with its keys inserted in a random order, recursively."""
    items = list(d.items())
    random.Random(len(items)).shuffle(items)
    return {k: shuffled(v) if isinstance(v, dict) else v for k, v in items}


@given(configs)
def test_hash_ignores_key_order(config):
    assert records.config_hash(config) == records.config_hash(shuffled(config))


@given(configs, st.sampled_from(records.NOT_HASHED), leaves)
def test_hash_ignores_logging_paths_and_flags(config, key, value):
    assert records.config_hash(config) == records.config_hash({**config, key: value})


@given(configs)
def test_hash_sees_every_result_changing_key(config):
    key = next(iter(config))
    changed = {**config, key: ["changed", config[key]]}
    assert records.config_hash(changed) != records.config_hash(config)
    assert re.fullmatch(r"[0-9a-f]{16}", records.config_hash(config))


def full_record(status="ok", **metrics):
    """A record as train.py makes it."""
    config = whole_config("tnorm=product", seed=1)  # smoke's budget, the CPU's trainer
    return records.make_record(
        status=status,
        reason=None if status == "ok" else "non-finite loss",
        config=config,
        summary={"test_accuracy": 0.9, "steps": 4, **metrics},
        data_checksum="abc",
        git_commit=None,
        wall_time_s=1.0,
    )


HASH = records.config_hash(full_record()["config"])  # the name its record's file has


def test_make_record_fills_every_contract_field():
    record = full_record(pair_accuracy=0.7)
    assert set(RECORD_FIELDS) <= set(record)
    assert (record["seed"], record["profile"], record["steps"]) == (1, "smoke", 4)
    assert record["cons_ratio"] is None and record["pair_accuracy"] == 0.7


def test_write_then_read_round_trips_and_leaves_no_temporary(tmp_path):
    path = records.record_path(tmp_path, "exp", "0123456789abcdef")
    assert path == tmp_path / "exp" / "0123456789abcdef.json"
    records.write_record(path, full_record())
    assert records.read_record(path) == json.loads(json.dumps(full_record()))
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_a_failed_write_keeps_the_previous_record(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    records.write_record(path, full_record())

    def broken_dump(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(records.json, "dump", broken_dump)
    with pytest.raises(OSError):
        records.write_record(path, full_record("failed"))
    monkeypatch.undo()
    assert records.read_record(path)["status"] == "ok"


def test_write_rejects_an_unknown_status(tmp_path):
    with pytest.raises(ValueError, match="not one of"):
        records.write_record(tmp_path / "r.json", {**full_record(), "status": "done"})


def test_write_rejects_a_record_without_a_contract_field(tmp_path):
    record = full_record()
    del record["cu_ant"]
    with pytest.raises(ValueError, match=r"lacks the contract fields \['cu_ant'\]"):
        records.write_record(tmp_path / "r.json", record)


def test_only_an_ok_record_counts_as_done(tmp_path):
    ok, failed, corrupt = (tmp_path / name / f"{HASH}.json" for name in ("ok", "failed", "bad"))
    corrupt.parent.mkdir()
    records.write_record(ok, full_record())
    records.write_record(failed, full_record("failed"))
    corrupt.write_text('{"status": "ok"')
    assert records.is_done(ok)
    assert not records.is_done(failed)
    assert not records.is_done(corrupt)
    assert not records.is_done(tmp_path / "missing.json")


def test_git_commit_inside_and_outside_a_checkout(tmp_path):
    assert origin.git_commit(tmp_path) is None
    commit = origin.git_commit(records.Path(__file__).resolve().parents[2])
    assert commit is None or re.fullmatch(r"[0-9a-f]{40}(-dirty)?", commit)


def test_record_fields_are_the_published_contract():
    """These names are published to the results module and outside tools: never rename."""
    contract = {
        "status", "reason", "config", "seed", "profile", "data_checksum", "git_commit", "steps",
        "wall_time_s", "test_accuracy", "best_test_accuracy", "cons_ratio", "cu_cons", "cu_ant",
        "cons_magnitude", "ant_magnitude",
    }  # fmt: skip
    assert contract <= set(RECORD_FIELDS)


def test_hash_is_pinned_and_ignores_what_names_a_job():
    """Records are found by this hash: change the pinned value only on purpose (old records of
    a changed hash are not found again, and their configuration reruns)."""
    config = {"seed": 0, "tnorm": {"name": "yager", "p": 1.5}, "kb": {"w_dfl": 10}}
    named = {
        **config,
        "experiment_name": "aggregation",
        "row": "forall_log_product",
        "provenance": {"kb.w_dfl": {"source": "paper", "note": "caption"}},
    }
    assert records.config_hash(config) == records.config_hash(named) == "e33130ed62976ba9"
    assert records.config_hash({**config, "kb": {"w_dfl": 10.0}}) == "e33130ed62976ba9"
    assert records.config_hash({**config, "seed": True}) != records.config_hash(config)


def test_every_setting_a_config_spells_is_hashed_at_any_value():
    """No key is left out of the hash for holding an old default (records were migrated once
    instead, lifecycle/migrate.py): spelling a setting at the value its absence meant is another
    configuration, as is a setting in another group."""
    config = {"seed": 0, "optimizer": {"name": "adam", "lr": 0.001}, "model": {"k": 10}}
    spelled = {**config, "optimizer": {**config["optimizer"], "fused": True}}
    assert records.config_hash(spelled) != records.config_hash(config)
    biased = {**config, "model": {"k": 10, "ntn_bias": False}}
    assert records.config_hash(biased) != records.config_hash(config)
    kb = {"seed": 0, "kb": {"name": "same", "w_dfl": 10.0}}
    assert records.config_hash(kb) != records.config_hash({"seed": 0, "problem": kb["kb"]})


def test_a_record_whose_config_hashes_elsewhere_is_not_reused_under_its_file_name(tmp_path):
    """A file name is no proof: a record copied under another configuration's hash (its config
    lukasiewicz, its name the default's) is neither reused nor what a job of that hash finds."""
    planted = {**full_record(), "config": {**full_record()["config"], "tnorm": {"name": "x"}}}
    records.write_record(records.record_path(tmp_path, "other", HASH), planted)
    assert records.reuse_done(tmp_path, records.record_path(tmp_path, "mine", HASH)) is None
    records.write_record(records.record_path(tmp_path, "trained", HASH), full_record())
    found = records.reuse_done(tmp_path, records.record_path(tmp_path, "mine", HASH))
    assert found is not None and found["reused_from"] == f"trained/{HASH}.json"


def test_a_record_whose_seed_is_not_its_configs_is_no_record(tmp_path):
    path = records.record_path(tmp_path, "exp", HASH)
    records.write_record(path, {**full_record(), "seed": 7})
    assert "is not its config's seed 1" in records.defect(path)
    elsewhere = {**full_record()["config"], "experiment_name": "elsewhere"}
    records.write_record(path, {**full_record(), "experiment": "elsewhere", "config": elsewhere})
    assert "says experiment 'elsewhere', not its folder 'exp'" in records.defect(path)


def test_a_record_of_another_experiment_is_reused(tmp_path):
    trained = records.record_path(tmp_path, "sigmoidal_s", HASH)
    config = {**full_record()["config"], "experiment_name": "sigmoidal_s"}
    trained_record = {"experiment": "sigmoidal_s", "row": "s=9.0", "config": config}
    records.write_record(trained, {**full_record(), **trained_record})
    path = records.record_path(tmp_path, "sigmoidal_b0", HASH)
    config = {**config, "experiment_name": "sigmoidal_b0"}
    job = {"experiment": "sigmoidal_b0", "row": "b0=-0.5", "name": "b0", "config": config}
    record = records.reuse_done(tmp_path, path, **job)
    assert record == records.read_record(path)
    assert record["reused_from"] == f"sigmoidal_s/{HASH}.json"
    assert {k: record[k] for k in job} == job
    assert record["test_accuracy"] == 0.9
    again = records.reuse_done(tmp_path, records.record_path(tmp_path, "best", trained.stem), row=1)
    assert again["reused_from"] == f"sigmoidal_s/{HASH}.json"


def test_only_an_ok_record_of_another_experiment_is_reused(tmp_path):
    own = records.record_path(tmp_path, "exp", "0123456789abcdef")
    records.write_record(own, full_record())
    assert records.reuse_done(tmp_path, own) is None
    failed = records.record_path(tmp_path, "other", "fedcba9876543210")
    records.write_record(failed, full_record("failed"))
    assert records.reuse_done(tmp_path, records.record_path(tmp_path, "exp", failed.stem)) is None


def test_an_old_record_without_provenance_still_loads(tmp_path):
    old = {k: v for k, v in full_record().items() if k not in ("provenance", "reused_from")}
    path = tmp_path / "exp" / f"{HASH}.json"
    path.parent.mkdir()
    path.write_text(json.dumps(old))
    assert records.read_record(path) == old and records.is_done(path)
    copy = records.reuse_done(tmp_path, tmp_path / "new" / path.name, experiment="new")
    assert copy["reused_from"] == f"exp/{HASH}.json"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"status": "ok"}', "lacks the fields ['reason', 'config'"),
        ("[1, 2]", "a JSON list, not a run record"),
        ('{"status": "ok"', "not JSON"),
    ],
)
def test_only_a_whole_valid_record_is_done_and_nothing_else_is_overwritten_silently(
    tmp_path, capsys, text, why
):
    path = records.record_path(tmp_path, "exp", HASH)
    path.parent.mkdir()
    path.write_text(text)
    assert not records.is_done(path) and records.read_record(path) is None
    assert why in records.defect(path)
    assert capsys.readouterr().err == ""  # asking is silent: the writer names it, once
    records.write_record(path, full_record())
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and why in err
    assert records.is_done(path)
    assert path.with_name(path.name + ".invalid").read_text() == text


def test_an_ok_record_without_a_test_accuracy_or_of_another_hash_is_not_done(tmp_path):
    path = records.record_path(tmp_path, "exp", "0123456789abcdef")
    records.write_record(path, {**full_record(), "test_accuracy": None})
    assert not records.is_done(
        path
    ) and "status ok without a test (or validation) accuracy" in records.defect(path)
    records.write_record(path, {**full_record(), "config_hash": "fedcba9876543210"})
    assert not records.is_done(path) and "config hash fedcba9876543210" in records.defect(path)


def test_reuse_follows_to_a_record_that_trained_never_to_itself(tmp_path):
    trained = records.record_path(tmp_path, "a", HASH)
    records.write_record(trained, full_record())
    copy = records.record_path(tmp_path, "b", trained.stem)
    assert records.reuse_done(tmp_path, copy, experiment="b")["reused_from"] == "a/" + trained.name
    trained.unlink()
    assert records.reuse_done(tmp_path, trained, experiment="a") is None  # so job a trains
    assert not trained.exists()
    itself = {**full_record(), "reused_from": "b/" + copy.name}
    records.write_record(copy, itself)
    assert not records.is_done(copy) and "reused_from names itself" in records.defect(copy)


def test_one_configuration_has_one_hash_on_any_device_and_a_cell_sets_aside_the_seeds():
    config = {
        "seed": 0,
        "data": {"split_seed": None, "batch_size": 64},
        "trainer": {"accelerator": "cpu", "precision": "32-true"},
    }
    gpu = {**config, "trainer": {**config["trainer"], "accelerator": "gpu"}}
    assert records.config_hash(gpu) == records.config_hash(config)
    assert records.hashed_config(gpu)["trainer"]["accelerator"] == "cpu"
    assert gpu["trainer"]["accelerator"] == "gpu"  # the config itself is left alone
    half = {**config, "trainer": {**config["trainer"], "precision": "16-mixed"}}
    assert records.config_hash(half) != records.config_hash(config)
    other_seed = {**gpu, "seed": 3, "data": {**config["data"], "split_seed": 3}}
    assert records.cell_hash(other_seed) == records.cell_hash(config)
    assert records.config_hash(other_seed) != records.config_hash(config)


def test_where_the_data_comes_from_changes_no_hash_but_what_it_is_does():
    config = {
        "seed": 0,
        "data": {"source": "auto", "root": None, "cache_dir": None, "labeled_fraction": 0.01},
    }
    moved = {**config, "data": {**config["data"], "source": "idx", "root": "/m", "cache_dir": "/c"}}
    assert records.config_hash(moved) == records.config_hash(config)
    fewer = {**config, "data": {**config["data"], "labeled_fraction": 0.02}}
    assert records.config_hash(fewer) != records.config_hash(config)


def test_the_senders_commit_names_the_code_a_copied_tree_ran(monkeypatch):
    monkeypatch.setenv("DFL_BENCH_GIT_COMMIT", "c006afe")
    assert origin.git_commit(".") == "c006afe"
    monkeypatch.delenv("DFL_BENCH_GIT_COMMIT")
    assert origin.git_commit(".") != "c006afe"


def test_the_record_schema_names_each_field_in_one_module():
    """dfl_bench/schema.py spells the record's fields; every other module reads them there."""
    package = Path(records.__file__).resolve().parents[1]
    spelled = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        for field in ('"test_accuracy"', '"best_test_accuracy"', '"cons_ratio"')
        if field in path.read_text()
    }
    assert spelled == {"schema.py"}


def test_every_field_of_every_committed_record_is_named_in_the_schema():
    """A record's top-level fields are named once, in dfl_bench/schema.py: a field the lifecycle
    or a task starts writing without naming it there fails here."""
    import json

    from dfl_bench import schema
    from dfl_bench.paths import REPO_DIR

    unnamed: dict[str, str] = {}
    for path in sorted((REPO_DIR / "results" / "records").glob("*/*.json")):
        for key in json.loads(path.read_text()):
            if not schema.named(key):
                unnamed.setdefault(key, str(path.relative_to(REPO_DIR)))
    assert unnamed == {}
    assert not schema.named("no_such_field")


def test_where_a_task_class_lives_is_no_configuration():
    """conf/task's `_target_` (schema.CODE_KEYS) changes no hash: a record made before tasks
    were classes (no `_target_`) counts for the cell a config composed today fills."""
    from dfl_bench.lifecycle.records import config_hash

    today = {
        "seed": 0,
        "task": {"_target_": "dfl_bench.tasks.mnist_kb.MnistKB", "name": "mnist_kb"},
    }
    before = {"seed": 0, "task": {"name": "mnist_kb"}}
    assert config_hash(today) == config_hash(before) != config_hash({"seed": 0})
    other = {"seed": 0, "task": {"_target_": "x.Y", "name": "parity"}}
    assert config_hash(other) == config_hash({"seed": 0, "task": {"name": "parity"}})
    assert config_hash(other) != config_hash(today)


def test_minus_zero_hashes_as_zero():
    """-0.0 trains the numbers 0.0 trains: one configuration, one hash."""
    config = {"seed": 0, "augment": {"degrees": 0.0}, "tnorm": {"eps": [0.0, 1.0]}}
    negative = {"seed": 0, "augment": {"degrees": -0.0}, "tnorm": {"eps": [-0.0, 1.0]}}
    assert records.config_hash(negative) == records.config_hash(config)


def test_a_record_of_another_configuration_at_a_jobs_path_is_not_done_and_is_kept_aside(
    tmp_path, capsys
):
    """A record copied under this configuration's file name, its claimed hash made to match: the
    job is not skipped, and the record its run writes keeps the copied one beside it."""
    planted = {**full_record(), "config": {**full_record()["config"], "tnorm": {"name": "godel"}}}
    path = records.record_path(tmp_path, "exp", HASH)
    path.parent.mkdir()
    path.write_text(json.dumps({**planted, "config_hash": HASH}))
    assert records.read_record(path) is not None  # a whole record, only not this one's
    assert not records.is_done(path)
    records.write_record(path, full_record())
    assert records.is_done(path) and records.read_record(path)["config"] == full_record()["config"]
    kept = json.loads(path.with_name(path.name + ".invalid").read_text())
    assert kept["config"] == planted["config"]
    assert capsys.readouterr().err.count("another configuration") == 1


def test_a_second_record_set_aside_keeps_the_first(tmp_path, capsys):
    """Two records of other configurations set aside in a row are both kept, the
    second as `.invalid.1`, each named where it went."""
    path = records.record_path(tmp_path, "exp", HASH)
    path.parent.mkdir()
    planted = []
    for name in ("godel", "lukasiewicz"):
        config = {**full_record()["config"], "tnorm": {"name": name}}
        planted.append(config)
        path.write_text(json.dumps({**full_record(), "config": config, "config_hash": HASH}))
        records.write_record(path, full_record())
    first, second = (path.with_name(path.name + s) for s in (".invalid", ".invalid.1"))
    assert json.loads(first.read_text())["config"] == planted[0]
    assert json.loads(second.read_text())["config"] == planted[1]
    err = capsys.readouterr().err
    assert f"kept as {first}\n" in err and f"kept as {second}\n" in err
