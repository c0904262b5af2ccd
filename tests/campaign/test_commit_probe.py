"""Commit probes: which overrides a probe keeps, when commits count as training alike, and the
notes a table gives a cell of several commits."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from campaign import commit_probe
from dfl_bench.results import probes, render_paper
from dfl_bench.results.agreement import agreement
from dfl_bench.results.cells import build_table
from dfl_bench.results.load import load_records
from tests.results.test_results import PAPER, write

REPO = Path(__file__).resolve().parents[2]


def _head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_probe_keeps_the_records_choices_and_sets_its_own_budget():
    overrides = ["row=godel", "+experiment=tnorms", "seed=2", "profile=long", "threads=2"]
    overrides += ["records_dir=results/records", "logger=none", "trainer=gpu", "kb=both"]
    args = commit_probe.probe_overrides(overrides)
    assert args[:3] == ["row=godel", "+experiment=tnorms", "kb=both"]
    assert args[3:] == list(commit_probe.PROBE)
    assert "seed=0" in args and "profile=long" not in args and "trainer=gpu" not in args


def test_a_records_overrides_are_read_in_its_commits_vocabulary(tmp_path):
    old = tmp_path / "conf"  # a commit from before `problem` became `kb`
    (old / "problem").mkdir(parents=True)
    (old / "config.yaml").write_text("defaults:\n  - problem: same\nseed: 0\n")
    assert commit_probe.probe_overrides(["problem=both"], str(old))[0] == "problem=both"
    with pytest.raises(ValueError, match="'problem' is no key of the configuration"):
        commit_probe.probe_overrides(["problem=both"])  # today's conf/ has no `problem`


def test_commits_train_alike_only_when_every_probe_gave_the_same_numbers():
    a, b = {"numbers": {"cu_ant": 0.5, "test_accuracy": 0.9}}, {"numbers": {"cu_ant": 0.5}}
    assert probes.same({"x": a, "y": dict(a)}) is True
    assert probes.same({"x": a, "y": b}) is False
    assert probes.same({"x": a, "y": {"error": "exit 1"}}) is None
    assert probes.same({"x": a}) is None


def _table(tmp_path, commits):
    records = tmp_path / "records"
    write(records, "tnorms", "a", row="godel", seed=0, commit="aaa")
    write(records, "tnorms", "b", row="godel", seed=1, commit="bbb")
    frame = load_records(records)
    digest = frame["configuration"].iloc[0]
    if commits is not None:
        path = tmp_path / probes.PROBES
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"cells": {digest: {"commits": commits}}}))
    table = build_table(PAPER.tables["tnorms"], frame, "quick", tmp_path)
    return table, render_paper.markdown(table, agreement(table))


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


def _configurations(records: Path, *rows: str) -> list[str]:
    """The configuration (config hash, seeds aside) of each row's records under `records`."""
    frame = load_records(records)
    return [frame.loc[frame["row"] == row, "configuration"].iloc[0] for row in rows]


def test_a_retrained_seed_drops_its_old_commit_and_a_cell_of_one_commit_is_dropped(
    tmp_path, monkeypatch
):
    records, out = tmp_path / "records", tmp_path / "probes.json"
    write(records, "tnorms", "a", row="godel", seed=0, commit="aaa")
    write(records, "tnorms", "b", row="godel", seed=1, commit="ccc")
    write(records, "tnorms", "c", row="product", seed=0, commit="aaa")
    godel, product = _configurations(records, "godel", "product")
    alike, other = {"numbers": {"cu_ant": 0.5}}, {"numbers": {"cu_ant": 0.6}}
    # probed before seed 1 of godel was retrained at ccc (it was bbb, which trained otherwise),
    # and before product's second commit was retrained away
    stale = {
        godel: {"commits": {"aaa": alike, "bbb": other}, "same": False},
        product: {"commits": {"aaa": alike, "bbb": alike}, "same": True},
    }
    machine = commit_probe.machine()
    out.write_text(json.dumps({"cells": stale, "machine": machine}))
    probed = []
    monkeypatch.setattr(
        commit_probe, "probe", lambda commit, overrides: probed.append(commit) or alike
    )
    with pytest.raises(commit_probe.WouldDrop, match="--prune drops them"):
        commit_probe.run(records, out)  # a cell to drop: asked for, never on the way
    assert probed == [] and json.loads(out.read_text())["cells"] == stale
    known = commit_probe.run(records, out, prune=True)
    assert probed == ["ccc"]  # only the new commit trains a probe
    assert list(known["cells"]) == [godel]
    assert known["cells"][godel]["commits"] == {"aaa": alike, "ccc": alike}
    assert known["cells"][godel]["same"] is True
    assert json.loads(out.read_text())["cells"] == known["cells"]


def test_probing_on_another_cpu_leaves_the_committed_probes_as_they_are(
    tmp_path, monkeypatch, capsys
):
    records, out = tmp_path / "records", tmp_path / "probes.json"
    write(records, "tnorms", "a", row="godel", seed=0, commit="aaa")
    write(records, "tnorms", "b", row="godel", seed=1, commit="ccc")
    made = {"cells": {"x": {"commits": {}, "same": None}}, "machine": commit_probe.machine()}
    out.write_text(json.dumps(made))
    before = out.read_text()
    here = commit_probe.machine()
    monkeypatch.setattr(commit_probe, "probe", lambda *a: pytest.fail("probed on another CPU"))
    capability = "AVX512" if here["cpu_capability"] == "AVX2" else "AVX2"
    model = "AMD EPYC" if here["cpu"] != "AMD EPYC" else "Intel(R) Xeon(R) Processor"
    unnamed = {k: v for k, v in here.items() if k != "cpu"}  # a file that predates the model
    for other in ({**here, "cpu_capability": capability}, {**here, "cpu": model}):
        monkeypatch.setattr(commit_probe, "machine", lambda other=other: other)
        code = commit_probe.main([f"--records-dir={records}", f"--out={out}", "--limit=0"])
        assert code == 2 and out.read_text() == before
        assert "probes compare to the bit only on one machine: nothing changed" in (
            capsys.readouterr().err
        )
    monkeypatch.setattr(commit_probe, "machine", lambda: here)
    out.write_text(json.dumps({**made, "machine": unnamed}))
    assert commit_probe.main([f"--records-dir={records}", f"--out={out}", "--limit=0"]) == 2


def test_a_cell_is_decided_by_the_probes_of_one_machine_that_ran_all_its_commits(tmp_path):
    """Probes compare to the bit only on one machine: another CPU's file (made with --out)
    decides a cell when it probed every commit of it; two files' halves decide nothing."""
    same = {"numbers": {"cu_ant": 0.5}}
    folder = tmp_path / Path(probes.PROBES).parent
    folder.mkdir(parents=True)
    here = folder / "commit_probes.json"
    there = folder / "commit_probes_avx2.json"
    here.write_text(json.dumps({"cells": {"cfg": {"commits": {"aaa": same}}}}))
    there.write_text(json.dumps({"cells": {"cfg": {"commits": {"bbb": same}}}}))
    probes.probed.cache_clear()
    assert probes.verdict(tmp_path, "cfg", ["aaa", "bbb"]) is None
    there.write_text(json.dumps({"cells": {"cfg": {"commits": {"aaa": same, "bbb": same}}}}))
    probes.probed.cache_clear()
    assert probes.verdict(tmp_path, "cfg", ["aaa", "bbb"]) is True
    other = {"numbers": {"cu_ant": 0.6}}
    here.write_text(json.dumps({"cells": {"cfg": {"commits": {"aaa": same, "bbb": other}}}}))
    probes.probed.cache_clear()
    assert probes.verdict(tmp_path, "cfg", ["aaa", "bbb"]) is False  # one machine differs


def test_undecided_probes_only_the_cells_no_committed_probe_file_decides(tmp_path, monkeypatch):
    records, out = tmp_path / "records", tmp_path / "new_probes.json"
    write(records, "tnorms", "a", row="godel", seed=0, commit="aaa")
    write(records, "tnorms", "b", row="godel", seed=1, commit="ccc")
    write(records, "tnorms", "c", row="product", seed=0, commit="aaa")
    write(records, "tnorms", "d", row="product", seed=1, commit="ccc")
    godel, product = _configurations(records, "godel", "product")
    alike = {"numbers": {"cu_ant": 0.5}}
    committed = tmp_path / probes.PROBES  # another machine's file decides godel already
    committed.parent.mkdir(parents=True)
    committed.write_text(json.dumps({"cells": {godel: {"commits": {"aaa": alike, "ccc": alike}}}}))
    kept = {"x": {"commits": {"aaa": alike}, "same": None}}  # another cell of this file stays
    out.write_text(json.dumps({"cells": kept, "machine": commit_probe.machine()}))
    probed = []
    monkeypatch.setattr(
        commit_probe, "probe", lambda commit, overrides: probed.append(commit) or alike
    )
    probes.probed.cache_clear()
    known = commit_probe.run(records, out, undecided=True, repo=tmp_path)
    probes.probed.cache_clear()
    assert sorted(probed) == ["aaa", "ccc"]  # product's two commits, not godel's
    assert sorted(known["cells"]) == sorted(["x", product])
    assert known["cells"][product]["same"] is True


@pytest.mark.parametrize(
    "commit",
    ["../../escaped", "/tmp/dfl_bench_escaped", "--output=x", "abc1234", "0" * 40, None, 12],
)
def test_a_records_commit_is_a_full_hex_id_this_repository_knows_or_nothing_runs(
    commit, tmp_path, monkeypatch
):
    """A record arrives in a pull request: its git_commit never becomes a path, an option or a
    checkout of code the repository does not hold."""
    monkeypatch.setenv("DFL_BENCH_CACHE", str(tmp_path / "cache"))
    result = commit_probe.probe(commit, ["row=f1", "+experiment=formulas"])
    assert "error" in result and "numbers" not in result
    with pytest.raises(ValueError, match="commit"):
        commit_probe.checkout(commit)
    assert not (tmp_path / "cache").exists() and not Path("/tmp/dfl_bench_escaped").exists()


def test_a_commits_code_is_extracted_fresh_never_taken_from_a_folder_on_disk(tmp_path, monkeypatch):
    """A folder in the cache marked whole (a link to elsewhere, a planted or edited one, one cut
    off) ran its code as the commit's and could have the probe call two commits alike: the
    probe extracts each commit itself into a private folder of its own, reused by this process
    only."""
    import subprocess

    monkeypatch.setenv("DFL_BENCH_CACHE", str(tmp_path / "cache"))
    head = _head()
    planted = tmp_path / "planted"
    (planted / "dfl_bench").mkdir(parents=True)
    (planted / "dfl_bench" / "__main__.py").write_text("raise SystemExit('planted')\n")
    (planted / commit_probe.COMPLETE).write_text(head + "\n")
    (tmp_path / "cache" / "commits").mkdir(parents=True)
    (tmp_path / "cache" / "commits" / head).symlink_to(planted)
    folder = commit_probe.checkout(head)
    assert not folder.is_relative_to(tmp_path) and folder.name == head
    main = subprocess.run(
        ["git", "show", f"{head}:dfl_bench/__main__.py"], capture_output=True, text=True
    ).stdout
    assert (folder / "dfl_bench" / "__main__.py").read_text() == main
    assert commit_probe.checkout(head) == folder  # once per process
    assert oct(folder.parent.stat().st_mode & 0o777) == "0o700"


@pytest.mark.parametrize(
    "override",
    [
        "+logger._target_=os.system",
        "hydra.callbacks.x._target_=os.system",
        "hydra/launcher=slurm",
        "--experimental-rerun=/tmp/planted.pickle",  # Hydra would pickle.load it
        "+hydra.job.env_set={GIT_CONFIG_COUNT:'1'}",
        "+kb.hydra.x=1",
        "kb.w_dfl=${oc.env:WANDB_API_KEY}",
        "task=../../../tmp/evil",
        7,
    ],
)
def test_a_records_overrides_that_would_run_code_or_read_secrets_are_not_probed(
    override, monkeypatch
):
    monkeypatch.setenv("WANDB_API_KEY", "sekrit-0123")
    with pytest.raises(ValueError, match="no plain config override|refused"):
        commit_probe.probe_overrides(["row=f1", override])
    result = commit_probe.probe(_head(), ["row=f1", override])
    assert "refused" in result["error"] and "overrides" not in result  # nothing ran
    assert "sekrit" not in json.dumps(result)


def test_a_missing_records_folder_is_an_error_and_the_probe_file_is_left_alone(tmp_path, capsys):
    out = tmp_path / "probes.json"
    out.write_text('{"cells": {"abc": {}}}\n')
    assert commit_probe.main(["--records-dir", str(tmp_path / "typo"), "--out", str(out)]) == 2
    assert "is no folder" in capsys.readouterr().err
    assert out.read_text() == '{"cells": {"abc": {}}}\n'


def test_a_probe_file_loses_cells_only_when_asked_and_says_so(tmp_path, capsys, monkeypatch):
    out = tmp_path / "probes.json"
    here = commit_probe.machine()
    before = json.dumps({"machine": here, "cells": {"abc": {"commits": {}}}})
    out.write_text(before)
    (tmp_path / "records").mkdir()  # an existing, empty records folder: it must not empty it
    args = ["--records-dir", str(tmp_path / "records"), "--out", str(out)]
    assert commit_probe.main(args) == 2
    assert "nothing changed; --prune drops them" in capsys.readouterr().err
    assert out.read_text() == before
    assert commit_probe.main([*args, "--prune"]) == 0
    assert "drops 1 cell(s)" in capsys.readouterr().err


def _pair(records: Path, commits: Sequence[str], extra: str = "", folder: str = "") -> None:
    """A committed same_symmetric record as seeds 0 and 1 at `commits`, `extra` added to their
    overrides, under `records/<folder or its experiment>/`."""
    from dfl_bench.lifecycle.records import config_hash

    committed = sorted((REPO / "results" / "records" / "same_symmetric").glob("*.json"))
    source = json.loads(committed[0].read_text())
    for seed, commit in zip((0, 1), commits, strict=True):
        record = json.loads(json.dumps(source))
        record.update(seed=seed, git_commit=commit)
        record["config"]["seed"] = seed
        kept = [o for o in record["overrides"] if not o.startswith("seed=")]
        record["overrides"] = [*kept, f"seed={seed}", *([extra] if extra else [])]
        record["config_hash"] = config_hash(record["config"])
        if folder:
            record["experiment"] = record["config"]["experiment_name"] = folder
            record["config_hash"] = config_hash(record["config"])
        place = records / (folder or record["experiment"])
        place.mkdir(parents=True, exist_ok=True)
        (place / f"{record['config_hash']}.json").write_text(json.dumps(record))


def _commits() -> list[str]:
    return [_head(), subprocess.run(["git", "rev-parse", "HEAD~1"], cwd=REPO, capture_output=True,
                                    text=True, check=True).stdout.strip()]  # fmt: skip


def test_a_record_whose_overrides_do_not_give_its_config_is_refused_not_probed(
    tmp_path, monkeypatch, capsys
):
    honest, forged = tmp_path / "honest", tmp_path / "forged"
    _pair(honest, _commits())
    _pair(forged, _commits(), "model.ntn_k=1")  # the records' config says ntn_k: 50
    alike = {"numbers": {"cu_ant": 0.5}}
    probed = []
    monkeypatch.setattr(commit_probe, "probe", lambda c, o: probed.append((c, o)) or alike)
    known = commit_probe.run(forged, tmp_path / "forged.json")
    assert probed == []  # nothing trained
    (cell,) = known["cells"].values()
    assert cell["same"] is None
    for result in cell["commits"].values():
        assert "model.ntn_k=1, the record's 50" in result["error"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("refused same_symmetric/" in line for line in err)
    known = commit_probe.run(honest, tmp_path / "honest.json")
    assert sorted(c for c, _ in probed) == sorted(_commits())  # both commits probed
    (cell,) = known["cells"].values()
    assert cell["same"] is True


def test_a_records_commit_or_folder_with_terminal_escapes_is_skipped_and_printed_escaped(
    tmp_path, capsys, monkeypatch
):
    records = tmp_path / "records"
    monkeypatch.setattr(commit_probe, "probe", lambda c, o: {"error": "not probed here"})
    _pair(records, ["\x1b]0;PWNED\x07", "\x1b[2K\x1b[1A"])
    _pair(records, _commits(), folder="x\x1b]0;PWN2\x07")
    out = tmp_path / "probes.json"
    assert commit_probe.main([f"--records-dir={records}", f"--out={out}", "--limit=2"]) == 0
    printed = capsys.readouterr()
    assert "\x1b" not in printed.out + printed.err and "\x07" not in printed.out + printed.err
    assert printed.err.count("[commit_probe] skipped") == 4
    assert printed.err.count("'git_commit' is no printable line of text") == 2
    assert printed.err.count("x\\x1b]0;PWN2\\x07/") == 2  # the folder named, escaped
    assert json.loads(out.read_text())["cells"] == {}


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ("net=lenet", "net=lenet, the record's paper"),  # the config's net is the paper's
        ("families.yager_p2.w_dfl=0", "the record's config has no families.yager_p2.w_dfl"),
        ("+optimizer.warmup=50", "the record's config has no optimizer.warmup"),
    ],
)
def test_an_override_the_records_config_does_not_hold_is_refused_before_training(
    tmp_path, monkeypatch, capsys, extra, why
):
    _pair(tmp_path / "records", _commits(), extra)
    probed = []
    monkeypatch.setattr(commit_probe, "probe", lambda c, o: probed.append(c) or {"numbers": {}})
    known = commit_probe.run(tmp_path / "records", tmp_path / "probes.json")
    assert probed == []  # nothing trained
    (cell,) = known["cells"].values()
    assert cell["same"] is None
    assert all(why in result["error"] for result in cell["commits"].values())
    assert capsys.readouterr().err.count("[commit_probe] refused same_symmetric/") == 2


def test_a_probe_that_trains_another_config_than_its_records_decides_nothing(
    tmp_path, monkeypatch, capsys
):
    """A record whose config its overrides do not give (model.ntn_k: 1, no override sets it):
    the probe at the record's own commit trains today's ntn_k 50, another configuration."""
    from dfl_bench.lifecycle.records import config_hash

    records = tmp_path / "records"
    _pair(records, _commits())
    honest = {}
    for path in sorted(records.glob("*/*.json")):
        record = json.loads(path.read_text())
        honest[record["git_commit"]] = json.loads(json.dumps(record["config"]))
        record["config"]["model"]["ntn_k"] = 1  # no override says so
        record["config_hash"] = config_hash(record["config"])
        path.unlink()
        (path.parent / f"{record['config_hash']}.json").write_text(json.dumps(record))

    def trained(commit, overrides):  # the probe's run: its budget, seed 0, the overrides' config
        config = {**honest[commit], "seed": 0, "profile": {"name": "quick"}, "threads": 1}
        return {"overrides": list(overrides), "numbers": {"cu_ant": 0.5}, "config": config}

    monkeypatch.setattr(commit_probe, "probe", trained)
    known = commit_probe.run(records, tmp_path / "probes.json")
    (cell,) = known["cells"].values()
    assert cell["same"] is None
    for result in cell["commits"].values():
        assert "numbers" not in result and "config" not in result
        assert result["error"] == f"{commit_probe.UNREPRODUCED}: model.ntn_k"
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("undecided same_symmetric/" in e and "ntn_k" in e for e in err)
    for path in sorted(records.glob("*/*.json")):  # the config its overrides give: decided
        record = json.loads(path.read_text())
        record["config"] = honest[record["git_commit"]]
        record["config_hash"] = config_hash(record["config"])
        path.unlink()
        (path.parent / f"{record['config_hash']}.json").write_text(json.dumps(record))
    known = commit_probe.run(records, tmp_path / "honest.json")
    (cell,) = known["cells"].values()
    assert cell["same"] is True
    assert all(set(r) == {"overrides", "numbers"} for r in cell["commits"].values())


def test_a_probe_runs_its_checkouts_code_with_the_working_directory_off_the_path(
    tmp_path, monkeypatch
):
    """An entry point started outside the checkout sets PYTHONSAFEPATH (dfl_bench/__init__.py),
    so the probe's interpreter no longer finds the commit's code by its working directory: it
    is named on PYTHONPATH."""
    import sys

    folder = tmp_path / "commit"
    (folder / "dfl_bench").mkdir(parents=True)
    (folder / "dfl_bench" / "__init__.py").write_text("")
    run, found = subprocess.run, []

    def which_code(command, **kwargs):
        """The dfl_bench the probe's interpreter would import; the probe fails."""
        code = [sys.executable, "-c", "import dfl_bench; print(dfl_bench.__file__)"]
        found.append(run(code, cwd=kwargs["cwd"], env=kwargs.get("env"), capture_output=True))
        return subprocess.CompletedProcess(command, 1, "", "not trained here")

    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    monkeypatch.setattr(commit_probe, "known_commit", lambda commit: None)
    monkeypatch.setattr(commit_probe, "checkout", lambda commit: folder)
    monkeypatch.setattr(commit_probe, "probe_overrides", lambda overrides, conf: list(overrides))
    monkeypatch.setattr(commit_probe.subprocess, "run", which_code)
    assert "error" in commit_probe.probe("0" * 40, ["row=f1", "+experiment=formulas"])
    assert Path(found[0].stdout.decode().strip()) == folder / "dfl_bench" / "__init__.py"


def _unreachable_commits(clone: Path) -> list[str]:
    """Two commits in a shared clone of this repository that no ref holds (a fetched pull
    request's head, a stash), each HEAD's tree with HEAD as parent."""
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(REPO), str(clone)],
                   check=True)  # fmt: skip
    who = {f"GIT_{r}_{k}": v for r in ("AUTHOR", "COMMITTER") for k, v in
           (("NAME", "x"), ("EMAIL", "x@x"))}  # fmt: skip
    return [
        subprocess.run(
            ["git", "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", name], cwd=clone, env={
                **os.environ, **who}, capture_output=True, text=True, check=True
        ).stdout.strip()
        for name in ("planted 1", "planted 2")
    ]  # fmt: skip


def test_a_records_commit_outside_this_checkouts_history_is_never_extracted_or_run(
    tmp_path, monkeypatch, capsys
):
    """A commit object the repository holds but no branch does is skipped as a
    commit the probe cannot check out, said on stderr: no `git archive`, no training run."""
    import sys

    clone = tmp_path / "clone"
    planted = _unreachable_commits(clone)
    monkeypatch.setattr(commit_probe, "REPO_DIR", clone)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    assert commit_probe.known_commit(head) is None  # its history is probed
    _pair(tmp_path / "records", planted)
    run, ran = subprocess.run, []

    def spy(command, *args, **kwargs):
        """Every command; the training run (were it reached) fails at once."""
        ran.append(list(command))
        if command[0] == sys.executable:
            return subprocess.CompletedProcess(command, 1, "", "not trained here")
        return run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", spy)
    known = commit_probe.run(tmp_path / "records", tmp_path / "probes.json")
    assert not [c for c in ran if "archive" in c or c[0] == sys.executable]
    (cell,) = known["cells"].values()
    assert cell["same"] is None
    err = capsys.readouterr().err.splitlines()
    for commit in planted:
        why = f"commit {commit} is not in this checkout's history (an ancestor of HEAD)"
        assert why in cell["commits"][commit]["error"]
        assert [line for line in err if why in line and "skipped" in line]
        with pytest.raises(ValueError, match="not in this checkout's history"):
            commit_probe.checkout(commit)


def test_a_probes_child_gets_none_of_the_callers_secrets(tmp_path, monkeypatch):
    """The probe's training run is a commit's code: it sees the path, home, locale, thread
    settings and the dfl_bench cache, never the caller's tokens."""
    import sys

    folder = tmp_path / "commit"
    folder.mkdir()
    run, seen = subprocess.run, []

    def environment(command, **kwargs):
        """What a child started as the probe starts it sees; the probe fails."""
        code = [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"]
        done = run(code, cwd=kwargs["cwd"], env=kwargs.get("env"), capture_output=True, text=True)
        seen.append(json.loads(done.stdout))
        return subprocess.CompletedProcess(command, 1, "", "not trained here")

    kept = {"OMP_NUM_THREADS": "1", "LC_ALL": "C.UTF-8", "DFL_BENCH_CACHE": str(tmp_path)}
    for name, value in {**kept, "SECRET": "hunter2", "WANDB_API_KEY": "sekrit"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(commit_probe, "known_commit", lambda commit: None)
    monkeypatch.setattr(commit_probe, "checkout", lambda commit: folder)
    monkeypatch.setattr(commit_probe, "probe_overrides", lambda overrides, conf: list(overrides))
    monkeypatch.setattr(commit_probe.subprocess, "run", environment)
    assert "error" in commit_probe.probe("0" * 40, ["row=f1", "+experiment=formulas"])
    (child,) = seen
    assert "SECRET" not in child and "WANDB_API_KEY" not in child
    assert kept.items() <= child.items() and {"PATH", "HOME"} <= set(child)
    assert child["PYTHONPATH"].split(os.pathsep)[0] == str(folder)
