"""`python -m dfl_bench.reproduction.harvest`: a background run's finished records land in the
records folder under its name, nothing there is replaced, no machine path gets in."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from dfl_bench.lifecycle import migrate, records
from dfl_bench.reproduction import harvest
from dfl_bench.tasks import contract

REPO = Path(__file__).resolve().parents[2]


def written(folder: Path, letter: str, **fields) -> Path:
    """A committed formulas record as a run writing into `folder` would have written it, its
    seed set by `name` (one letter), at its config's hash."""
    committed = next((REPO / "results" / "records" / "formulas").glob("*.json"))
    record = json.loads(committed.read_text())
    record["config"]["records_dir"] = str(folder)
    record["config"]["seed"] = record["seed"] = 100 + ord(letter) - ord("a")
    record["overrides"] = ["row=f1", f"records_dir={folder}", "logger=none"]
    record["config_hash"] = records.config_hash(record["config"])  # a valid record at its name
    for key, value in fields.items():
        record[key] = value
    return records.write_record(folder / "formulas" / f"{record['config_hash']}.json", record)


def test_a_harvest_copies_new_ok_records_renamed_and_keeps_what_is_there(tmp_path):
    source, dest = tmp_path / "background", tmp_path / "committed"
    new = written(source, "a")
    failed = written(source, "b", status="failed", reason="NaN loss")
    same = written(source, "c")
    other = written(source, "d")
    reason = contract.nonfinite_reason(7, "dfl")
    diverged = written(source, "e", status="failed", reason=reason)
    (dest / "formulas").mkdir(parents=True)
    records.write_record(
        dest / "formulas" / same.name,
        harvest.moved(json.loads(same.read_text()), "results/records"),
    )
    there = records.write_record(
        dest / "formulas" / other.name, {**json.loads(other.read_text()), "seed": 99}
    )
    before = there.read_text()
    dry = harvest.harvest(source, dest, "results/records", diverged=["formulas"], dry=True)
    assert not (dest / "formulas" / new.name).exists()  # a dry run writes nothing
    assert harvest.harvest(source, dest, "results/records", dry=True).new == [
        dest / "formulas" / new.name
    ]  # a diverged record only for an experiment whose rule counts it
    done = harvest.harvest(source, dest, "results/records", diverged=["formulas"])
    assert sorted(done.new) == sorted(dry.new)
    assert sorted(done.new) == sorted(dest / "formulas" / p.name for p in (new, diverged))
    assert done.kept == [there] and there.read_text() == before  # never replaced
    got, want = json.loads((dest / "formulas" / new.name).read_text()), json.loads(new.read_text())
    assert got["config"]["records_dir"] == "results/records"
    assert got["overrides"] == ["row=f1", "records_dir=results/records", "logger=none"]
    got["config"]["records_dir"], got["overrides"] = (
        want["config"]["records_dir"],
        want["overrides"],
    )
    assert got == want  # nothing else moved
    assert not (dest / "formulas" / failed.name).exists()  # another failure trains again
    landed = json.loads((dest / "formulas" / diverged.name).read_text())
    assert (landed["status"], landed["reason"]) == ("failed", reason)  # its seed's outcome


def test_a_record_with_another_machine_path_stops_the_harvest_before_it_writes(tmp_path):
    source, dest = tmp_path / "background", tmp_path / "committed"
    written(source, "a")
    bad = written(source, "b")
    records.write_record(bad, {**json.loads(bad.read_text()), "log_dir": str(tmp_path / "wandb")})
    with pytest.raises(ValueError, match="nothing was harvested: .*keeps the absolute path"):
        harvest.harvest(source, dest, "results/records")
    assert not dest.exists()


def test_the_command_names_what_it_harvested(tmp_path, capsys):
    source, dest = tmp_path / "background", tmp_path / "committed"
    name = written(source, "a").name
    assert harvest.main(["--from", str(source), "--records-dir", str(dest)]) == 0
    out = capsys.readouterr().out
    assert f"formulas/{name}" in out and "1 new record(s)" in out
    got = json.loads((dest / "formulas" / name).read_text())
    assert got["config"]["records_dir"] == str(dest)  # outside the repository: its own path
    with pytest.raises(SystemExit) as stop:
        harvest.main(["--from", str(tmp_path / "none"), "--records-dir", str(dest)])
    assert stop.value.code == 2 and "is no folder" in capsys.readouterr().err


def test_an_absolute_checkpoint_folder_is_named_as_the_default_one():
    from dfl_bench.reproduction.harvest import CHECKPOINTS, absolute_paths, moved

    record = {
        "config": {"records_dir": "/x/records", "checkpoint_dir": "/x/checkpoints"},
        "overrides": ["row=a", "records_dir=/x/records", "checkpoint_dir=/x/checkpoints"],
    }
    out = moved(record, "results/records")
    assert out["config"] == {"records_dir": "results/records", "checkpoint_dir": CHECKPOINTS}
    assert out["overrides"] == [
        "row=a",
        "records_dir=results/records",
        f"checkpoint_dir={CHECKPOINTS}",
    ]
    assert absolute_paths(out) == [] and record["config"]["checkpoint_dir"] == "/x/checkpoints"
    relative = {"config": {"checkpoint_dir": "ckpts"}, "overrides": ["checkpoint_dir=ckpts"]}
    assert moved(relative, "r")["overrides"] == ["checkpoint_dir=ckpts"]  # a relative one stays


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        (lambda p: p.write_text(p.read_text()[:200]), "not a whole run record"),
        (lambda p: p.write_text(json.dumps({"status": "ok"})), "not a whole run record"),
    ],
)
def test_a_truncated_record_stops_the_harvest_naming_it(tmp_path, spoil, why):
    source, dest = tmp_path / "background", tmp_path / "committed"
    written(source, "a")
    spoiled = written(source, "b")
    spoil(spoiled)
    with pytest.raises(ValueError, match=rf"{spoiled.name}: {why}"):
        harvest.harvest(source, dest, "results/records")
    assert not dest.exists()


def test_records_of_another_commit_or_a_dirty_tree_are_not_harvested(tmp_path):
    source, dest = tmp_path / "background", tmp_path / "committed"
    commit = "a" * 40
    good = written(source, "a", git_commit=commit)
    dirty = written(source, "b", git_commit=f"{commit}-dirty")
    with pytest.raises(ValueError, match=rf"{dirty.name}: trained on a dirty tree"):
        harvest.harvest(source, dest, "results/records")
    dirty.unlink()
    other = written(source, "c", git_commit="b" * 40)
    with pytest.raises(ValueError, match=rf"{other.name}: trained at {'b' * 40}, not {commit}"):
        harvest.harvest(source, dest, "results/records", commit)
    other.unlink()
    assert harvest.harvest(source, dest, "results/records", commit).new == [
        dest / "formulas" / good.name
    ]


def test_a_record_of_an_older_form_lands_migrated_at_its_new_hash(tmp_path):
    source, dest = tmp_path / "background", tmp_path / "committed"
    old = json.loads(
        (REPO / "tests" / "data" / "old_records" / "budget_optimizer_in_profile.json").read_text()
    )
    old["git_commit"] = old["git_commit"].removesuffix("-dirty")
    records.write_record(source / "mnist_addition" / f"{old['config_hash']}.json", old)
    done = harvest.harvest(source, dest, "results/records")
    assert len(done.new) == 1 and done.new[0].stem != old["config_hash"]
    got = json.loads(done.new[0].read_text())
    assert got["config"]["optimizer"]["lr"] == 0.002 and got["config_hash"] == done.new[0].stem
    assert records.config_hash(got["config"]) == done.new[0].stem


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"name": "f1\x1b]0;TITLE\x07\x1b[2K\x1b[1A"}, "its .name. is no printable line"),
        ({"overrides": ["row=f1", "kb.w_dfl=$\\{oc.env:SECRET\\}"]}, "an interpolation"),
        ({"overrides": ["row=f1", "data.cache_dir=/some/path"]}, "sets a path"),
        ({"overrides": ["row=f1", "data={cache_dir:../../../../tmp/x}"]}, "a dict or list value"),
        ({"overrides": ["row=f1", "+trainer.default_root_dir=../x"]}, "argument of the trainer"),
        ({"overrides": ["row=f1", "~kb=same"]}, "a deletion"),
    ],
)
def test_a_record_that_would_print_escapes_or_set_a_secret_or_path_is_refused(
    tmp_path, fields, why
):
    source, dest = tmp_path / "background", tmp_path / "committed"
    written(source, "a", **fields)
    with pytest.raises(ValueError, match=f"nothing was harvested: .*{why}"):
        harvest.harvest(source, dest, "results/records")
    assert not dest.exists()


def test_two_records_that_land_on_one_name_stop_the_harvest_rather_than_one_winning(tmp_path):
    """An older form of a record may sit under another name (the hash before the records'
    migration) and migrate to the same hash: two such records with different numbers are
    refused together, nothing written."""
    source, dest = tmp_path / "background", tmp_path / "committed"
    first = written(source, "a", test_accuracy=0.2, best_test_accuracy=0.9)
    twin = {**json.loads(first.read_text()), "test_accuracy": 0.3}
    twin.pop("config_hash")
    older = first.parent / f"{migrate.shim_hash(twin['config'])}.json"
    assert older != first
    records.write_record(older, twin)
    with pytest.raises(ValueError, match="two records of one configuration and seed"):
        harvest.harvest(source, dest, "results/records")
    assert not dest.exists() or not any(dest.rglob("*.json"))
    twin["test_accuracy"] = 0.2  # the same record twice: one copy, no refusal
    records.write_record(older, twin)
    assert len(harvest.harvest(source, dest, "results/records").new) == 1


def test_a_nested_text_that_is_no_printable_line_or_a_linked_folder_stops_the_harvest(tmp_path):
    source, dest = tmp_path / "background", tmp_path / "committed"
    path = written(source, "a")
    record = json.loads(path.read_text())
    record["config"]["optimizer"]["name"] = "f1\n## Claims: all 40 hold\x1b[2K"
    records.write_record(path, record)
    with pytest.raises(ValueError, match=r"its 'config.optimizer.name' is no printable line"):
        harvest.harvest(source, dest, "results/records")
    path.unlink()
    elsewhere = tmp_path / "elsewhere"
    written(elsewhere, "b")
    (source / "linked").symlink_to(elsewhere / "formulas")
    with pytest.raises(ValueError, match="a symbolic link, not a folder of the records"):
        harvest.harvest(source, dest, "results/records")


@pytest.mark.parametrize(
    ("override", "why"),
    [
        ("net=lenet", "net=lenet, the record's paper"),  # a group option its config names not
        ("families.yager_p2.w_dfl=0", "the record's config has no families.yager_p2.w_dfl"),
        ("+optimizer.warmup=50", "the record's config has no optimizer.warmup"),
    ],
)
def test_a_record_whose_config_does_not_say_it_ran_with_an_override_is_refused(
    tmp_path, override, why
):
    source, dest = tmp_path / "background", tmp_path / "committed"
    path = written(source, "a")
    record = json.loads(path.read_text())
    record["overrides"].append(override)
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match=f"does not say it ran with its overrides.*{why}"):
        harvest.harvest(source, dest, "results/records")
    assert not dest.exists()
    record["overrides"][-1] = "net=paper"  # what its config says: harvested
    path.write_text(json.dumps(record))
    assert len(harvest.harvest(source, dest, "results/records").new) == 1


def test_every_committed_record_says_it_ran_with_its_overrides():
    found = sorted(REPO.glob("results/**/records/*/*.json"))
    assert len(found) > 280
    for path in found:
        record = json.loads(path.read_text())
        assert harvest.unsaid(record["overrides"], record["config"]) == [], path


def test_a_write_that_fails_midway_names_how_many_records_were_harvested(
    tmp_path, refuse_temporary, capsys
):
    """The second of three new records' temporary cannot be made (a read-only folder): one
    line, exit 2, saying one was written (it stays whole) and no temporary left."""
    source, dest = tmp_path / "background", tmp_path / "committed"
    for letter in "abc":
        written(source, letter)
    refuse_temporary(2)
    assert harvest.main(["--from", str(source), "--records-dir", str(dest)]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "nothing was harvested" not in said
    assert said.endswith(
        "not written (Permission denied); the file there is as it was; 1 of the 3 new "
        "record(s) were harvested before it (kept: a rerun harvests the rest)\n"
    )
    (kept,) = os.listdir(dest / "formulas")
    assert records.read_record(dest / "formulas" / kept) is not None


def test_a_record_whose_config_was_edited_under_its_name_is_refused_not_moved(tmp_path):
    """A record whose config no longer hashes to its name and `config_hash` (kb.w_dfl 10 -> 5,
    today's hash and the one before the records' migration alike) carries another
    configuration's numbers: refused in one line naming it, nothing written."""
    source, dest = tmp_path / "background", tmp_path / "committed"
    path = written(source, "a")
    record = json.loads(path.read_text())
    record["config"]["kb"]["w_dfl"] = 5.0
    path.write_text(json.dumps(record))
    assert records.defect(path) is None  # its name and config_hash still agree
    edited = records.config_hash(record["config"])
    with pytest.raises(ValueError, match=f"{path.name}: its config hashes to {edited}, not its "):
        harvest.harvest(source, dest, "results/records")
    assert not dest.exists()


def test_a_record_that_ran_with_its_checkpoints_under_the_working_folder_is_harvested(tmp_path):
    """records.portable writes a checkpoint folder under the working folder relative in the
    config (`c`) but the override keeps it absolute: the harvest names both the default folder,
    and harvests the record."""
    source, dest = tmp_path / "background", tmp_path / "committed"
    path = written(source, "a")
    record = json.loads(path.read_text())
    record["config"]["checkpoint_dir"] = "c"
    record["overrides"] = [*record["overrides"], f"checkpoint_dir={tmp_path / 'c'}"]
    records.write_record(path, record)
    done = harvest.harvest(source, dest, "results/records")
    got = json.loads(done.new[0].read_text())
    assert got["config"]["checkpoint_dir"] == harvest.CHECKPOINTS
    assert f"checkpoint_dir={harvest.CHECKPOINTS}" in got["overrides"]


def test_a_record_whose_job_took_a_list_of_formulas_is_harvested_and_held_to_it(tmp_path):
    """`kb.formulas=[1]`, a documented list override, is what the record's config holds: the
    record is harvested; one whose config holds another list is refused."""
    source, dest = tmp_path / "background", tmp_path / "committed"
    path = written(source, "a")
    record = json.loads(path.read_text())
    assert record["config"]["kb"]["formulas"] == [1]
    records.write_record(path, {**record, "overrides": [*record["overrides"], "kb.formulas=[1]"]})
    other = written(source, "b")
    lied = {**json.loads(other.read_text())}
    records.write_record(other, {**lied, "overrides": [*lied["overrides"], "kb.formulas=[2]"]})
    with pytest.raises(ValueError, match=r"1 record\(s\).*kb.formulas=\[2\], the record's \[1\]"):
        harvest.harvest(source, dest, "results/records")
    other.unlink()
    done = harvest.harvest(source, dest, "results/records")
    assert done.new == [dest / "formulas" / path.name]
    assert "kb.formulas=[1]" in json.loads(done.new[0].read_text())["overrides"]


ELSEWHERE = "../../../../tmp/elsewhere"


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        (lambda r: r.update(evil="x"), "its field 'evil' is no field of a run record"),
        (lambda r: r.update(name="../../etc/passwd"), "name '../../etc/passwd' is no job's name"),
        (lambda r: r.update(name="/etc/passwd"), "name '/etc/passwd' is no job's name"),
        (lambda r: r["config"].update(checkpoint_dir=ELSEWHERE),
         f"config.checkpoint_dir '{ELSEWHERE}' is no path inside its folder"),
        (lambda r: (r["config"].update(checkpoint_dir=ELSEWHERE),
                    r["overrides"].append(f"checkpoint_dir={ELSEWHERE}")),
         f"overrides 'checkpoint_dir={ELSEWHERE}' sets a path that leaves its folder"),
        (lambda r: r["overrides"].append(f"checkpoint_dir={ELSEWHERE}"),
         f"overrides 'checkpoint_dir={ELSEWHERE}' sets a path that leaves its folder"),
        (lambda r: r["overrides"].append("+records_dir='../x'"),
         "overrides \"\\+records_dir='../x'\" sets a path that leaves its folder"),
        (lambda r: r.update(log_dir="outputs/../../x"), "log_dir 'outputs/../../x' is no path"),
        *((lambda r, o=o: r["overrides"].append(o), f"overrides {re.escape(repr(o))} sets no")
          for o in ("hydra.sweep.dir=../../x", "+hydra.searchpath=[file:///tmp/evil]",
                    "hydra.job.chdir=true", "+x=${oc.env:SECRET}", "-m")),
        *((lambda r, o=o: r["overrides"].append(o), f"overrides {re.escape(repr(o))} sets a path")
          for o in ("checkpoint_dir=..\\..\\etc", "checkpoint_dir=\uff0e\uff0e/etc")),
        (lambda r: r.update(stack=["../../x"]), r"stack \['../../x'\] is no stack"),
        (lambda r: r["config"].update(experiment_name="tnorms"),
         "experiment 'formulas' is not its config's experiment_name 'tnorms'"),
    ],
)  # fmt: skip
def test_a_record_with_an_undeclared_field_or_a_path_leaving_its_folder_is_refused(
    tmp_path, capsys, spoil, why
):
    """The record check the harvest reads with (records.invalid) declares a record's top-level
    fields (schema.named), takes a job's name only as a shown text (no leading `/`, no `..`
    part) and no path of it, or override setting one, that leaves its folder: one line, exit
    2, naming the file and the field; nothing written."""
    source, dest = tmp_path / "background", tmp_path / "committed"
    path = written(source, "a")
    record = json.loads(path.read_text())
    spoil(record)
    path.write_text(json.dumps(record))
    assert harvest.main(["--from", str(source), "--records-dir", str(dest)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: not a whole run record" in err
    assert re.search(why, err), err
    assert not dest.exists()
