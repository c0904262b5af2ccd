"""Nothing loaded runs code and no path leaves its folder: a checkpoint whose pickle
calls a command, an override whose `_target_` names one, a name that becomes a path outside
records_dir. The record's git_commit in commit_probe: tests/campaign/test_commit_probe.py; a
planted checkpoint in a job: tests/lifecycle/test_reliability.py."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
import warm_cli
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jobs import smoke_overrides, whole_config

from dfl_bench.lifecycle import guards, loggers, preflight

ENV = {**os.environ, "WANDB_MODE": "disabled"}
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "attack",
    [
        ["+logger._target_=os.system", "+logger.command=touch {marker}"],
        ["+hydra.callbacks.x._target_=os.system", "+hydra.callbacks.x.command=touch {marker}"],
        ["+hydra.callbacks.x._target_=subprocess.call", "+hydra.callbacks.x.args=[touch,{marker}]"],
    ],
)
def test_an_override_whose_target_runs_a_command_is_refused_before_anything_starts(
    attack, tmp_path
):
    marker = tmp_path / "ran"
    args = [*smoke_overrides(tmp_path), *(a.format(marker=marker) for a in attack)]
    done = warm_cli.run(args, tmp_path, ENV)
    assert done.returncode == 2, done.stderr
    assert "a _target_ from the command line must name code of dfl_bench" in done.stderr
    assert not marker.exists() and not (tmp_path / "records").exists()


def test_a_logger_target_must_be_a_shipped_option_or_a_lightning_logger():
    assert loggers.target_of({"_target_": "lightning.pytorch.loggers.CSVLogger"}) is not None
    assert loggers.target_of({}) is None
    for bad in ("os.system", "lightning.pytorch.loggers.logger.rank_zero_experiment", 3):
        with pytest.raises(ValueError, match="is not a logger; valid"):
            loggers.target_of({"_target_": bad})


def test_a_trusted_prefix_passes_the_command_line_check():
    from hydra.core.override_parser.overrides_parser import OverridesParser

    (ok,) = OverridesParser.create().parse_overrides(["+logger._target_=dfl_bench.x.y"])
    (sweep,) = OverridesParser.create().parse_overrides(["+logger._target_=os.system,os.popen"])
    assert preflight.untrusted_target(ok) is None
    assert "must name code of" in preflight.untrusted_target(sweep)


@pytest.mark.parametrize(
    "override",
    [
        "experiment_name=../../escaped",
        "experiment_name={tmp}/absolute",
        "experiment_name=..",
        "experiment_name=.hidden",
        "+experiment=../task/mnist_addition",
    ],
)
def test_a_name_that_would_leave_records_dir_is_refused_and_nothing_is_written(override, tmp_path):
    args = [*smoke_overrides(tmp_path / "inside"), override.format(tmp=tmp_path)]
    done = warm_cli.run(args, tmp_path, ENV)
    assert done.returncode == 2, done.stderr
    assert "must be a plain name" in done.stderr
    assert not list(tmp_path.rglob("*.json")) and not list(tmp_path.rglob("*.lock"))


@pytest.mark.parametrize("value", ["s=9.0", "-0.65", "yager_p1_5", "both", 9.0, 2])
def test_the_rows_and_experiments_we_ship_are_plain_names(value):
    guards.check_name(value, "row")


@pytest.mark.parametrize("value", ["a/b", "..", ".", "", "a\\b", None, ["x"]])
def test_separators_dots_and_non_names_are_refused(value):
    with pytest.raises(ValueError, match="must be a plain name"):
        guards.check_name(value, "row")


def test_every_shipped_experiment_name_is_plain():
    for path in (Path(__file__).resolve().parents[2] / "conf" / "experiment").glob("*.yaml"):
        guards.check_name(path.stem, "experiment")


@pytest.mark.parametrize("value", ["none", "Disabled", "off ", " 0"])
def test_every_spelling_of_caches_off_turns_them_off(value, monkeypatch):
    from dfl_bench import paths

    monkeypatch.setenv("DFL_BENCH_CACHE", value)
    assert paths.cache_root() is None and paths.cache_setting_defect() is None


def test_a_relative_cache_folder_is_refused_before_a_job_makes_it_where_it_runs(tmp_path):
    done = warm_cli.run(
        smoke_overrides(tmp_path), tmp_path, {**ENV, "DFL_BENCH_CACHE": "cache_here"}
    )
    assert done.returncode == 2 and "DFL_BENCH_CACHE='cache_here' is neither" in done.stderr
    assert not (tmp_path / "cache_here").exists()


@pytest.mark.slow
@pytest.mark.parametrize("logger", ["none", "wandb"])
def test_a_home_that_cannot_be_written_prints_no_librarys_warning(logger, tmp_path):
    """A cluster's read-only home: matplotlib and W&B keep their caches elsewhere, the MNIST
    cache says in one line that it goes on without, and the run ends ok."""
    home = tmp_path / "home_is_a_file"
    home.write_text("")
    env = {**ENV, "HOME": str(home), "WANDB_MODE": "offline"}
    done = warm_cli.run([*smoke_overrides(tmp_path), f"logger={logger}"], tmp_path, env)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert all(line.startswith(("[dfl_bench]", "  ")) for line in lines), lines
    assert "Matplotlib" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("override", "why"),
    [
        ("--experimental-rerun=/tmp/x.pickle", "not a plain key=value"),
        ("+hydra.job.env_set={GIT_CONFIG_COUNT:'1'}", "a Hydra setting"),
        ("kb.hydra.x=1", "a Hydra setting"),
        ("kb@hydra.job=both", "not a plain key=value"),
        ("kb.w_dfl=${oc.env:WANDB_API_KEY}", "an interpolation"),
        ("kb.w_dfl=$\\{oc.env:SECRET\\}", "an interpolation"),  # Hydra would unescape it
        ("data.cache_dir=/tmp/c_$\\{oc.env:SECRET\\}", "an interpolation"),
        ("data.cache_dir=/some/path", "sets a path"),
        ("records_dir=../../elsewhere", "sets a path"),
        ("debug.nan_at_step=1", "a debug flag"),
        ("+task._target_=os.system", "a _target_"),
        ("task=../../tmp/evil", "must be a name"),
        ("kb=both\nseed=1", "not one printable line"),
        ("nonsense.key=1", "no key of the configuration"),
        (["kb=both"], "a list, not a text"),
        ("row=ce_pair,ce_only", "a sweep"),  # a plan's multirun would train both rows
        ("kb.w_dfl=range(1,1000)", "a sweep"),
        ("tnorm=yager,godel", "a sweep"),
        ("kb.w_dfl=(", "not an override Hydra reads"),
        # decided on Hydra's parse: a value that sets keys inside it, a deletion, a mapping or
        # a group set to no option, a trainer's or logger's argument, a key no yaml sets
        ("data={cache_dir:/tmp/evil}", "a dict or list value"),
        ("++data={root:/tmp/evil}", "a dict or list value"),
        ("data={cache_dir:../../../../tmp/evil}", "a dict or list value"),
        ("kb.formulas=[[1]]", "kb.formulas's items are formula names or numbers"),
        ("kb.formulas=[/tmp/evil]", "kb.formulas's items are formula names or numbers"),
        ("kb.weights=[1]", "kb.weights takes a dict of formulas, got a list"),
        ("kb.scale=[mean]", "a dict or list value: a file sets one value"),
        ("+trainer.default_root_dir=/abs", "an argument of the trainer"),
        ("trainer.accelerator=gpu", "an argument of the trainer"),
        ("+logger.dir=/abs", "an argument of the logger"),
        ("~kb=same", "a deletion"),
        ("~data=", "a deletion"),
        ("data=5", "data holds several keys"),
        ("model=null", "model holds several keys"),
        ("kb=null", "must be a name (no path, not null)"),
        ("+model.foo=1", "model.foo is set by no yaml"),
        ("+data.foo=1", "data.foo is set by no yaml"),
        # a key no yaml sets, a value of another kind than the yamls', one out of its range
        ("+optimizer.eps=1e-08", "optimizer.eps is set by no yaml of the configuration; valid "
         "keys there: ['cosine_final', 'fused', 'lr', 'momentum', 'name', 'warmup']"),
        ("+optimizer.maximize=false", "optimizer.maximize is set by no yaml"),
        ("optimizer.fused=1", "optimizer.fused must be true or false, as the configuration's"),
        ("optimizer.fused=0", "optimizer.fused must be true or false"),
        ("optimizer.fused=null", "optimizer.fused must be true or false"),
        ("+optimizer.warmup=null", "optimizer.warmup=null is what leaving optimizer.warmup out"),
        ("+optimizer.cosine_final=null", "optimizer.cosine_final=null is what leaving"),
        ("+data.validation=null", "data.validation=null is what leaving data.validation out"),
        ("+optimizer.warmup=0", "optimizer.warmup=0 is what leaving optimizer.warmup out"),
        ("+optimizer.cosine_final=1.0", "optimizer.cosine_final=1.0 is what leaving"),
        ("+data.validation=0.0", "data.validation=0.0 is what leaving data.validation out"),
        ("optimizer.lr=true", "optimizer.lr must be a finite number > 0.0, got True"),
        ("model.ntn_k=99999999999999999999", "model.ntn_k must be an integer in [1, 1024], got"),
        ("model.ntn_k=100000000", "model.ntn_k must be an integer in [1, 1024]"),
        ("net.width=100000", "net.width must be an integer in [1, 1024]"),
        ("data.eval_batch_size=60001", "data.eval_batch_size must be an integer in [1, 60000]"),
    ],
)  # fmt: skip
def test_an_override_read_from_a_file_is_a_plain_config_override(override, why):
    from dfl_bench.lifecycle.file_overrides import check_file_overrides, refusal

    assert why in refusal(override)
    with pytest.raises(ValueError, match="plan.json: the override .* is refused"):
        check_file_overrides(["kb=both", override], "plan.json")


@pytest.mark.parametrize(
    "override",
    ["kb=sum9", "+experiment=best", "implication.b0=-1.0", "+task.digits=2", "trainer=gpu",
     "+optimizer.warmup=10", "+optimizer.cosine_final=0.99", "+data.validation=0.1",
     "+optimizer.warmup=1", "data.split_seed=null", "row=ce_pair", "model.ntn_k=10",
     "model.ntn_k=1024", "optimizer.fused=false", "optimizer.lr=1", "profile.subset_train=null",
     "kb.formulas=[1]", "kb.formulas=[same/1,sum9/2]", "kb.weights={1:2}"],
)  # fmt: skip
def test_the_overrides_records_and_plans_hold_pass(override):
    from dfl_bench.lifecycle.file_overrides import refusal

    assert refusal(override) is None


SIZES = {"model.ntn_k": 1024, "net.width": 1024, "data.batch_size": 60_000, "threads": 1024}


@given(key=st.sampled_from(sorted(SIZES)), n=st.integers(-5, 70_000) | st.integers(min_value=0))
@example(key="net.width", n=0)
@example(key="net.width", n=1025)
@settings(deadline=None)  # the first example reads the yamls
def test_a_size_passes_the_file_gate_and_the_record_schema_exactly_within_its_bounds(key, n):
    """A whole number that sizes a tensor or a pool: one range, at the gate and in a record."""
    from dfl_bench.lifecycle.file_overrides import refusal
    from dfl_bench.lifecycle.records import unfit

    group, _, name = key.rpartition(".")
    config = {group: {name: n}} if group else {name: n}
    within = 1 <= n <= SIZES[key]
    in_record = unfit({"config": config}, whole=False) is None  # its group's other keys aside
    assert (refusal(f"{key}={n}") is None) == within == in_record


@given(value=st.integers() | st.floats(allow_nan=False) | st.none() | st.text(max_size=3))
def test_the_optimizers_fused_flag_from_a_file_or_a_command_line_is_true_or_false(value):
    """Another kind than the yaml's `fused: true` is refused where a file or a job is checked."""
    from dfl_bench.lifecycle.file_overrides import type_refusal, value_refusal

    why = value_refusal("optimizer.fused", value)
    assert why is not None and why == type_refusal("optimizer.fused", value)
    assert why.startswith("optimizer.fused must be true or false")
    assert value_refusal("optimizer.fused", False) is None


def _file_overrides(node):
    """Every override a committed file holds: a record's `overrides`, a plan cell's `override`."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "overrides" and isinstance(value, list):
                yield from value
            elif key == "override" and isinstance(value, str):
                yield value
            else:
                yield from _file_overrides(value)
    elif isinstance(node, list):
        for value in node:
            yield from _file_overrides(value)


def test_every_committed_records_and_plans_override_passes_the_file_gate():
    """What records and plans under results/ hold passes, but the `problem` group of the
    records made before it was renamed `kb` (their tools read them at their own commit)."""
    from dfl_bench.lifecycle.file_overrides import located, refusal

    refused, seen = [], 0
    for path in sorted((REPO / "results").rglob("*.json")):
        data = json.loads(path.read_text())
        applied = path.name == "plan.json"
        for override in located(_file_overrides(data)):
            seen += 1
            if refusal(override, applied=applied) and not override.startswith("problem"):
                refused.append((str(path.relative_to(REPO)), override))
    assert seen > 10_000 and refused == []


def test_a_plans_override_that_sets_the_jobs_environment_is_refused_before_a_job_starts(
    tmp_path, monkeypatch, capsys
):
    import json
    import subprocess

    from campaign import seed_plan

    marker = tmp_path / "ran"
    cell = {
        "seeds": 1,
        "override": "+hydra.job.env_set={GIT_CONFIG_COUNT:'1',"
        f"GIT_CONFIG_KEY_0:core.fsmonitor,GIT_CONFIG_VALUE_0:'touch {marker}'}}",
    }
    (tmp_path / "plan.json").write_text(
        json.dumps({"profile": "paper", "cells": {"best/sum9": cell}})
    )
    (tmp_path / "records").mkdir()
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("a job started"))
    args = ["run", "--out", str(tmp_path), "--repo", str(tmp_path), "--records-dir", "records"]
    with pytest.raises(SystemExit) as exit_:
        seed_plan.main(args)
    assert exit_.value.code == 2 and not marker.exists()
    assert "is refused (a Hydra setting)" in capsys.readouterr().err


def _planted_mnist(folder: Path, marker: Path) -> Path:
    """A folder `mnist/` as the installed package lays it out, its pickle running a command."""
    import gzip
    import pickle

    class Planted:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    (folder / "mnist" / "data").mkdir(parents=True)
    (folder / "mnist" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    path = folder / "mnist" / "data" / "mnist.pkl.gz"
    with gzip.open(path, "wb") as f:
        pickle.dump(Planted(), f)
    return path


def test_a_mnist_folder_in_the_working_directory_does_not_shadow_the_installed_data(tmp_path):
    import subprocess
    import sys

    marker = tmp_path / "ran"
    _planted_mnist(tmp_path, marker)
    code = "from dfl_bench.tasks.mnist.mnist_sources import hub_pickle_path as p; print(p())"
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert not Path(found).is_relative_to(tmp_path) and not marker.exists()


def test_a_planted_mnist_pickle_is_never_loaded(tmp_path, monkeypatch):
    from dfl_bench.tasks.mnist import mnist_sources

    marker = tmp_path / "ran"
    planted = _planted_mnist(tmp_path, marker)
    with pytest.raises(mnist_sources.MnistSourceError, match="nothing of it was read"):
        mnist_sources.decode_hub_pickle(planted)
    monkeypatch.setattr(mnist_sources, "HUB_SHA256", mnist_sources.file_sha256(planted))
    with pytest.raises(mnist_sources.MnistSourceError, match="is no part of MNIST's arrays"):
        mnist_sources.decode_hub_pickle(planted)  # even a matching digest loads arrays only
    assert not marker.exists()


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ("experiment_name=" + "a" * 300, "experiment_name is 300 characters long; at most 100"),
        ("experiment_name=café", "does not parse (quote a value"),
        ("experiment_name='café'", "must be a plain name"),
    ],
)
def test_a_name_hydra_would_fail_on_is_one_line_before_it_starts(override, said):
    why = preflight.defect([override])
    assert why is not None and said in why and "\n" not in why


def test_a_records_own_folders_are_taken_off_before_its_overrides_are_checked():
    from dfl_bench.lifecycle.file_overrides import located

    record = ["+experiment=best", "records_dir=/x/records", "checkpoint_dir=ck", "seed=1"]
    assert located(record) == ["+experiment=best", "seed=1"]
    assert located(["data.cache_dir=/x"]) == ["data.cache_dir=/x"]  # still checked, refused


@pytest.mark.parametrize("entry", ["dfl_bench", "dfl_bench.results"])
def test_a_package_in_the_working_directory_never_runs(entry, tmp_path):
    """`python -m dfl_bench...` puts the working directory first on sys.path: a folder holding a
    library's name (omegaconf, imported at once; torchvision, by Lightning; pandas, by the
    renderer) must not run, whichever of the package's entry points the README names runs."""
    import subprocess
    import sys

    marker = tmp_path / "ran"
    for name in ("omegaconf", "torchvision", "hydra", "pandas", "numpy"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            f"open({str(marker)!r}, 'w').close()\nraise SystemExit(99)\n"
        )
    args = {
        "dfl_bench": ["--help"],
        "dfl_bench.results": [
            "--records-dir",
            str(tmp_path / "records"),
            "--out",
            "out",
            "--tables",
            "formulas",
        ],
    }[entry]
    one_committed_record(tmp_path / "records")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", entry, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.returncode == 0 and not marker.exists(), done.stderr[-500:]


def test_the_migration_follows_no_symbolic_link(tmp_path):
    from campaign.migrate_records import migrate_folder, own_records

    elsewhere = tmp_path / "elsewhere" / "exp"
    elsewhere.mkdir(parents=True)
    (elsewhere / "r.json").write_text("{}")
    root = tmp_path / "records"
    (root / "real").mkdir(parents=True)
    (root / "linkdir").symlink_to(elsewhere, target_is_directory=True)
    (root / "real" / "link.json").symlink_to(elsewhere / "r.json")
    assert own_records(root) == []
    migrate_folder(root)
    assert (elsewhere / "r.json").read_text() == "{}"


@pytest.mark.parametrize(
    "cell",
    [
        "best/../../../../elsewhere",
        "best/leak_${oc.env:SECRET}",
        "best/a/b",
        "../best/x",
        "baseline/ce_pair,.",  # its sweep folder a Hydra sweep: the run failed, not the reading
        "baseline/a=b",
    ],
)
def test_a_plans_cell_name_is_a_plain_experiment_and_row(cell, tmp_path):
    import json

    from campaign import seed_plan

    plan_file = tmp_path / "plan.json"
    spec = {"seeds": 1, "override": "kb=sum9"}
    plan_file.write_text(json.dumps({"profile": "paper", "cells": {cell: spec}}))
    with pytest.raises(ValueError, match="no <experiment>/<row> of plain names"):
        seed_plan.read_plan(plan_file)


def _committed_record() -> dict:
    import json

    repo = Path(__file__).resolve().parents[2]
    return json.loads(next((repo / "results/records/formulas").glob("*.json")).read_text())


@pytest.mark.parametrize(
    ("spoil", "key"),
    [
        (lambda c: c.update(task="mnist_kb"), "config.task"),
        (lambda c: c["profile"].update(optimizer=[1]), "config.profile.optimizer"),
        (lambda c: c.update(problem={"kb": "same"}), "config.problem.kb"),
    ],
)
def test_a_record_of_another_shape_stops_the_migration_naming_its_key(spoil, key, tmp_path):
    import json

    from campaign import migrate_records
    from dfl_bench.lifecycle import records

    record = _committed_record()
    spoil(record["config"])
    folder = tmp_path / "formulas"
    folder.mkdir()
    path = folder / f"{records.config_hash(record['config'])}.json"
    path.write_text(json.dumps({**record, "config_hash": path.stem}))
    with pytest.raises(ValueError, match=f"{key} is a .*, not a mapping; nothing was migrated"):
        migrate_records.migrate_folder(tmp_path)
    assert migrate_records.main([str(tmp_path)]) == 2


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[" * 200_000 + "]" * 200_000, "nested deeper than"),
        ("{not json", "not JSON"),
        ("[]", "list"),
        ('{"status": "failed", "status": "ok"}', "gives the key 'status' twice"),
        ('{"seed": ' + "9" * 5000 + "}", "4300 digits"),
        ('{"cons_ratio": ' + "9" * 400 + "}", "integer of 400 digits is beyond a float's range"),
        ('{"config": {"model": {"ntn_k": -1' + "0" * 400 + "}}}", "beyond a float's range"),
        ('{"cons_ratio": 1e400}', "the number 1e400 is beyond a float's range"),
        ('{"config": {"augment": {"degrees": NaN}}}', "NaN is no JSON number"),
        ('{"test_accuracy": Infinity}', "Infinity is no JSON number"),
        ('{"wall_time_s": -Infinity}', "-Infinity is no JSON number"),
    ],
)
def test_every_reader_of_a_file_from_others_says_one_line_for_a_hostile_file(
    text, why, tmp_path, capsys
):
    """The one reader (dfl_bench/untrusted.py) behind records, the migration, the renderer's
    loader and the probe file: a deep, malformed or mistyped file is one line, no traceback."""
    import warnings

    from campaign import commit_probe, migrate_records
    from dfl_bench.lifecycle import records
    from dfl_bench.results.load import RecordWarning, load_records
    from dfl_bench.untrusted import UntrustedFile, read_json

    folder = tmp_path / "records" / "formulas"
    folder.mkdir(parents=True)
    path = folder / "0123456789abcdef.json"
    path.write_text(text)
    with pytest.raises(UntrustedFile, match=why):
        read_json(path)
    assert why in records.defect(path)
    migrate_records.migrate_folder(tmp_path / "records")
    assert why in capsys.readouterr().err and path.read_text() == text  # named, left alone
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecordWarning)
        assert load_records(tmp_path / "records").empty
    assert any(why in str(w.message) for w in caught)
    probes = tmp_path / "probes.json"
    probes.write_text(text)
    args = ["--records-dir", str(tmp_path / "records"), "--out", str(probes)]
    assert commit_probe.main(args) == 2 and why in capsys.readouterr().err
    assert probes.read_text() == text


def test_an_override_after_the_multirun_flag_is_read_not_hydras_usage(tmp_path):
    """The README's order plus one override after `-m`: a sweep, not Hydra's usage text."""
    import subprocess
    import sys

    from dfl_bench.__main__ import flags_first

    assert flags_first(["+experiment=x", "-m", "a=1", "--multirun"]) == [
        "-m", "--multirun", "+experiment=x", "a=1",
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "dfl_bench", "+experiment=same_symmetric", "-m", "nonsense=1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert "usage:" not in done.stderr and "nonsense" in done.stderr  # its own one line


def test_a_run_refused_inside_the_job_leaves_no_folder_behind(tmp_path):
    """A refusal the job raises (a network's setting, checked where it is built) leaves neither
    Hydra's run folder nor an empty checkpoints folder in the working directory."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "dfl_bench", "net=bn_wide", "net.width=2.5", "profile=smoke",
         "logger=none"],
        cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )  # fmt: skip
    assert done.returncode == 2 and "net.width must be an integer" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("cell", "override", "own"),
    [
        ("same_symmetric/yager_p2_R", "row=product_R", "row=yager_p2_R"),
        ("best/sum9", "kb=both", "kb=sum9"),  # the table's rows are kb.name's
        ("sigmoidal_s/2.5", "implication.s=5.0", "implication.s=2.5"),
        ("sigmoidal_b0/-1", "implication.b0=-1.00001", "implication.b0=-1.0"),  # its row's %g
        ("best/both", "model.ntn_k=50", "kb=both"),  # no key of the sweep: every row trains
        ("best/sum9", "+kb=sum9", "kb=sum9"),
    ],
)
def test_a_plans_cell_whose_override_trains_another_row_is_one_line(
    cell, override, own, tmp_path, capsys
):
    """A cell whose override would train another row (through whichever key the experiment's
    rows use) and count its runs as the cell's is refused naming the cell, exit 2; the row's
    own override reads."""
    import json

    from campaign import seed_plan

    p = {"profile": "smoke", "cells": {cell: {"seeds": 1, "override": override}}}
    (tmp_path / "plan.json").write_text(json.dumps(p))
    with pytest.raises(SystemExit) as done:
        seed_plan.main(["status", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and f"cell {cell!r}: the override {override!r} trains no" in err
    p["cells"][cell]["override"] = own
    (tmp_path / "plan.json").write_text(json.dumps(p))
    assert seed_plan.main(["status", "--out", str(tmp_path), "--records-dir", str(tmp_path)]) == 0


def test_the_planned_jobs_of_a_cell_are_of_its_own_row_only(tmp_path):
    from campaign import seed_plan

    spec = {"seeds": 1, "override": "row=product_R"}
    p = {"profile": "smoke", "cells": {"same_symmetric/yager_p2_R": spec}}
    assert seed_plan.planned_jobs(p, tmp_path) == []
    p["cells"] = {"same_symmetric/product_R": spec}
    assert len(seed_plan.planned_jobs(p, tmp_path)) == 1


@pytest.mark.parametrize(
    ("wall", "said"),
    [("abc", "wall_time_s"), (True, "wall_time_s"), (-1, "wall_time_s"), (math.inf, "Infinity")],
)
def test_a_plans_wall_time_that_is_no_number_of_seconds_is_one_line(wall, said, tmp_path, capsys):
    import json

    from campaign import seed_plan

    spec = {"seeds": 1, "override": "kb=sum9", "wall_time_s": wall}
    (tmp_path / "plan.json").write_text(
        json.dumps({"profile": "paper", "cells": {"best/sum9": spec}})
    )
    with pytest.raises(SystemExit) as done:
        seed_plan.main(["status", "--out", str(tmp_path)])
    assert done.value.code == 2 and said in capsys.readouterr().err


def test_a_yaml_file_that_calls_an_environment_resolver_is_refused_before_anything_starts(
    tmp_path,
):
    """An experiment from a folder on Hydra's search path (or dropped into conf/) that reads the
    environment (`${oc.env:...}` in a field no hash covers) puts no secret into a record."""
    folder = tmp_path / "conf" / "experiment"
    folder.mkdir(parents=True)
    (folder / "envleak.yaml").write_text(
        "# @package _global_\nprovenance: {kb.w_dfl: {note: '${oc.env:PROBE_SECRET}'}}\n"
    )
    args = [
        *smoke_overrides(tmp_path),
        f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
        "+experiment=envleak",
    ]
    done = warm_cli.run(args, tmp_path, {**ENV, "PROBE_SECRET": "hunter2"})
    assert done.returncode == 2, done.stderr
    assert "calls the resolver 'oc.env'" in done.stderr
    assert "hunter2" not in done.stderr + done.stdout
    assert not (tmp_path / "records").exists()


def test_a_lock_that_is_a_symbolic_link_is_refused_and_its_target_left_alone(tmp_path):
    from dfl_bench.lifecycle.lock import AlreadyRunning, held

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "records" / ".0123456789abcdef.lock"
    link.parent.mkdir()
    link.symlink_to(victim)
    with pytest.raises(AlreadyRunning, match="a symbolic link"), held(link, "pid 1"):
        pass
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("override", ["force=no", "force='false'", "progress_bar=1"])
def test_a_flag_is_true_or_false_and_nothing_else(override):
    """`force=no` is text, and text is true: it would retrain over a finished record."""
    from hydra import compose, initialize_config_dir

    from dfl_bench.lifecycle.resolve import resolved_config
    from dfl_bench.paths import CONFIG_DIR

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        config = resolved_config(compose("config", overrides=[override]))
    with pytest.raises(ValueError, match=r"^(force|progress_bar) must be true or false, got "):
        guards.check_config(config)


def test_a_plans_override_sets_what_a_result_depends_on_not_how_runs_are_kept():
    from dfl_bench.lifecycle.file_overrides import refusal

    assert refusal("force=true") is None  # a record may say it was forced
    assert "a file does not choose it" in refusal("force=true", applied=True)
    assert refusal("row=yager_p2", applied=True) is None
    assert refusal("kb.w_dfl=2", applied=True) is None


def one_committed_record(records: Path) -> Path:
    """A committed formulas record, copied to its place under `records`; the committed file."""
    committed = next((Path(__file__).parents[2] / "results/records/formulas").glob("*.json"))
    (records / "formulas").mkdir(parents=True)
    (records / "formulas" / committed.name).write_text(committed.read_text())
    return committed


def test_a_rendering_writes_through_no_symbolic_link(tmp_path, capsys):
    """A records folder whose tables/ is a link (a pull request may commit one) is refused in
    one line, and the folder it points to is left as it was."""
    from dfl_bench.results.__main__ import main
    from dfl_bench.untrusted import UntrustedFile, write_text

    records = tmp_path / "records"
    one_committed_record(records)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "README.md").write_text("precious")
    (records / "tables").symlink_to(victim)
    assert main(["--records-dir", str(records)]) == 2
    assert "a symbolic link (nothing is written through one)" in capsys.readouterr().err
    assert [p.name for p in victim.iterdir()] == ["README.md"]
    assert (victim / "README.md").read_text() == "precious"
    (tmp_path / "link.md").symlink_to(victim / "README.md")
    with pytest.raises(UntrustedFile, match="a symbolic link"):
        write_text(tmp_path / "link.md", "overwritten")
    assert (victim / "README.md").read_text() == "precious"


def test_a_hard_link_where_a_rendering_writes_leaves_the_other_names_file_as_it_was(
    tmp_path, capsys
):
    """A hard link at a file a rendering writes (tables/README.md) to a file elsewhere: the
    rendering writes a new file at its name, the file elsewhere keeps its text; appending to a
    hard-linked file is refused."""
    from dfl_bench.results.__main__ import main
    from dfl_bench.untrusted import UntrustedFile, writer

    records = tmp_path / "records"
    one_committed_record(records)
    victim = tmp_path / "victim.md"
    precious = "# Tables\n\nGenerated by `python -m dfl_bench.results`.\n"  # a rendering's
    victim.write_text(precious)
    (records / "tables").mkdir()
    os.link(victim, records / "tables" / "README.md")
    assert main(["--records-dir", str(records)]) == 0
    assert victim.read_text() == precious
    assert (records / "tables" / "README.md").read_text() != precious
    os.link(victim, tmp_path / "log.txt")
    with pytest.raises(UntrustedFile, match="a hard link"):
        writer(tmp_path / "log.txt", "a")
    assert victim.read_text() == precious


@pytest.mark.parametrize("cells", ["[]", '{"x": "text"}', '{"x": {"commits": [1]}}'])
def test_a_probe_file_of_another_shape_is_skipped_by_the_tables_and_refused_by_the_prober(
    cells, tmp_path, capsys
):
    from campaign import commit_probe
    from dfl_bench.results import probes

    (tmp_path / "results").mkdir()
    path = tmp_path / "results" / "commit_probes_x.json"
    path.write_text(f'{{"machine": {{}}, "cells": {cells}}}')
    with pytest.warns(probes.ProbeWarning, match="the probe file is skipped"):
        assert probes.verdict(tmp_path, "x", ["a", "b"]) is None
    (tmp_path / "records").mkdir()
    args = ["--records-dir", str(tmp_path / "records"), "--out", str(path)]
    assert commit_probe.main(args) == 2
    assert "its cells are no mapping" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("plan", "said"),
    [
        ('{"profile": "long", "cells": {"nosuch/row": {"seeds": 3}}}', "names no experiment"),
        ('{"profile": "long", "cells": {"baseline/ce_pair": {"seeds": "3"}}}', "no whole number"),
        ('{"profile": "long", "cells": {}, "needs": [{"claim": 1}]}', "its needs are no list"),
    ],
)
def test_the_write_up_reads_a_committed_plan_as_a_file_from_others(plan, said, tmp_path):
    """A plan file of another shape stops the write-up's rendering with one line (it was a
    KeyError or a TypeError), before any block is written."""
    from campaign import plan_report

    path = tmp_path / "plan.json"
    path.write_text(plan)

    class Profile:
        profile = "long"

    with pytest.raises(ValueError, match=said):
        plan_report.outcome(Profile, path)


def test_a_record_whose_profile_is_no_budget_is_set_aside_not_a_traceback(tmp_path):
    from dfl_bench.lifecycle import records

    path = tmp_path / "default" / "0123456789abcdef.json"
    path.parent.mkdir()
    fields = dict.fromkeys(records.RECORD_FIELDS)
    spoiled = {**fields, "status": "failed", "seed": 0, "config": {"profile": "x"}}
    path.write_text(json.dumps(spoiled))
    assert "its profile is no budget" in records.defect(path)
    records.write_record(path, {**fields, "status": "failed", "seed": 0, "config": {}})
    assert path.with_name(path.name + ".invalid").exists()


def test_a_linked_experiment_folder_is_neither_written_through_nor_reused_from(tmp_path, capsys):
    """A records folder whose experiment folder is a link (to elsewhere) is refused before the
    job trains; one in another experiment's place is no record to reuse; the harvest writes
    through none; a checkpoint's members file is read as a file from others."""
    from dfl_bench.lifecycle import checkpoint, records
    from dfl_bench.reproduction import harvest

    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "default").symlink_to(outside)
    done = warm_cli.run(smoke_overrides(tmp_path), tmp_path, ENV)
    assert done.returncode == 2 and "a symbolic link" in done.stderr, done.stderr
    assert list(outside.iterdir()) == []
    with pytest.raises(ValueError, match="a symbolic link"):
        whole = {**dict.fromkeys(records.RECORD_FIELDS), "status": "failed"}
        records.write_record(tmp_path / "records" / "default" / "a.json", whole)
    assert records.find_done(tmp_path / "records", tmp_path / "records" / "mine" / "x.json") is None
    source = tmp_path / "background" / "default"
    source.mkdir(parents=True)
    (source / "0123456789abcdef.json").write_text("{}")
    with pytest.raises(ValueError, match="a symbolic link, not a folder of the records"):
        harvest.harvest(source.parent, tmp_path / "records", "results/records")
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / checkpoint.MEMBERS).write_text("[" * 200_000 + "]" * 200_000)
    assert checkpoint.read_members(tmp_path / "ckpt") == []
    assert "nested deeper than" in capsys.readouterr().err


def test_a_folder_name_with_terminal_escapes_is_shown_escaped_by_the_renderer(tmp_path, capsys):
    from dfl_bench.results.__main__ import main

    records = tmp_path / "records"
    committed = one_committed_record(records)
    odd = records / "aggr\x1b[2J\nregation"
    odd.mkdir()
    (odd / committed.name).write_text(committed.read_text())
    main(["--records-dir", str(records), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert "\x1b" not in err and "aggr\\x1b[2J\\nregation" in err


def test_a_records_profile_that_is_no_plain_name_writes_no_figure_outside_its_folder(
    tmp_path, capsys
):
    """A record's profile names its figures' files: `x/../../../escaped` would have the
    renderer write a figure three folders up from figures/; such a record is no whole record."""
    import json

    from dfl_bench.lifecycle import records as records_module
    from dfl_bench.results.__main__ import main

    records, out = tmp_path / "records", tmp_path / "out"
    path = records / "formulas" / one_committed_record(records).name
    record = json.loads(path.read_text())
    record["profile"] = "x/../../../escaped"
    path.write_text(json.dumps(record))
    (out / "figures" / "formulas_paper_vs_ours_x").mkdir(parents=True)
    assert "is no plain name" in records_module.invalid(record)
    assert main(["--records-dir", str(records), "--out", str(out), "--tables", "formulas"]) == 2
    assert "is no plain name" in capsys.readouterr().err
    assert not list(tmp_path.glob("escaped*"))


def test_a_plans_override_that_sweeps_is_refused_before_anything_trains(tmp_path, capsys):
    """A plan cell's override `row=ce_pair,ce_only` made `seed_plan run`'s multirun train two
    rows for one planned cell, and `status` never counted either; it is refused in one line."""
    import json

    from campaign import seed_plan

    out, records = tmp_path / "plan", tmp_path / "records"
    out.mkdir()
    records.mkdir()
    cell = {"seeds": 1, "override": "row=ce_pair,ce_only", "wall_time_s": 5}
    plan = {"profile": "smoke", "cells": {"baseline/ce_pair": cell}}
    (out / "plan.json").write_text(json.dumps(plan))
    args = ["run", "--out", str(out), "--records-dir", str(records)]
    with pytest.raises(SystemExit) as exit_:
        seed_plan.main(args)
    assert exit_.value.code == 2
    assert "is refused (a sweep" in capsys.readouterr().err
    assert not any(records.iterdir())


def test_a_pipe_named_like_a_record_is_refused_not_waited_on(tmp_path):
    """A FIFO `<hash>.json` in a records folder or a folder to harvest hung the renderer's
    loader and the harvest for ever (reading it waits for a writer); it is no plain file. Read
    in a thread, so the test fails (not hangs) where the reader would wait."""
    import threading
    import warnings

    from dfl_bench.reproduction.harvest import harvest
    from dfl_bench.results.load import RecordWarning, load_records
    from dfl_bench.untrusted import UntrustedFile, read_json

    folder = tmp_path / "records" / "formulas"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "0123456789abcdef.json")
    said: list[str] = []

    def readers() -> None:
        with pytest.raises(UntrustedFile, match="not a plain file"):
            read_json(folder / "0123456789abcdef.json")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RecordWarning)
            load_records(tmp_path / "records")
        said.extend(str(w.message) for w in caught)
        with pytest.raises(ValueError, match="not a plain file"):
            harvest(tmp_path / "records", tmp_path / "dest", "dest")
        said.append("done")

    reader = threading.Thread(target=readers, daemon=True)
    reader.start()
    reader.join(timeout=60)
    if reader.is_alive():  # let the waiting reader go before failing
        with open(folder / "0123456789abcdef.json", "w"):
            pass
    assert said[-1:] == ["done"] and any("not a plain file" in s for s in said)


def _record_beside(records: Path, change) -> Path:
    """A committed formulas record and beside it a copy `change`d, at its own place."""
    from dfl_bench.lifecycle.records import config_hash

    committed = one_committed_record(records)
    record = json.loads(committed.read_text())
    change(record)
    record["config_hash"] = config_hash(record["config"])
    path = records / "formulas" / f"{record['config_hash']}.json"
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize("where", ["row", "config"])
def test_a_records_row_that_is_no_plain_name_is_no_whole_record(tmp_path, where):
    """A record's row is a table's row label, in LaTeX too: `$\\input{/etc/passwd}$` was
    written into the .tex as it stood (a label in $ is the paper's LaTeX); such a record is no
    whole record, skipped by the tables and refused by the harvest."""
    from dfl_bench.lifecycle import records as records_module
    from dfl_bench.results.__main__ import main

    hostile = "$\\input{/etc/passwd}$"

    def change(record):
        (record if where == "row" else record["config"])["row"] = hostile
        record["config"]["optimizer"]["lr"] = 0.00123

    path = _record_beside(tmp_path / "records", change)
    assert "row '$\\\\input{/etc/passwd}$' is no plain name" in records_module.invalid(
        json.loads(path.read_text())
    )
    main(["--records-dir", str(tmp_path / "records"), "--out", str(tmp_path / "out")])
    for table in (tmp_path / "out" / "tables").iterdir():
        assert "input{/etc/passwd}" not in table.read_text(), table.name


def test_a_records_setting_in_a_row_label_is_text_in_latex(tmp_path, monkeypatch):
    """A record of another configuration is a row labelled by how it differs; a setting that
    holds `\\&` had that label written into the .tex as the paper's LaTeX (`\\input{...}`
    with it); a record's label is escaped as text."""
    from dfl_bench.lifecycle import records
    from dfl_bench.results.__main__ import main

    # the escaping alone: no config refused
    monkeypatch.setattr(records, "config_refusal", lambda config, overrides=(): None)

    def change(record):
        record["config"]["trainer"]["strategy"] = "x\\&\\input{/etc/passwd}"  # a free text

    _record_beside(tmp_path / "records", change)
    main(["--records-dir", str(tmp_path / "records"), "--out", str(tmp_path / "out")])
    tex = (tmp_path / "out" / "tables" / "formulas.tex").read_text()
    assert "trainer.strategy=x" in tex and "\\input{" not in tex


def test_a_records_text_in_a_markdown_table_is_text(tmp_path, monkeypatch):
    """A record's setting is shown in its row's label and its note, its failure in a note: a
    `|` split the label's cell (every number one column over), a tag was HTML; each is shown as
    text (a line break, which began Markdown of the record's own, is no record's text at all:
    tests/lifecycle/test_record_schema.py)."""
    from dfl_bench.lifecycle import records
    from dfl_bench.results.__main__ import main

    # the escaping alone: no config refused
    monkeypatch.setattr(records, "config_refusal", lambda config, overrides=(): None)

    def change(record):
        record["config"]["trainer"]["strategy"] = "<img src=x onerror=alert(1)>|y # planted"

    _record_beside(tmp_path / "records", change)
    main(["--records-dir", str(tmp_path / "records"), "--out", str(tmp_path / "out")])
    text = (tmp_path / "out" / "tables" / "formulas.md").read_text()
    assert "trainer.strategy=&lt;img src=x onerror=alert(1)&gt;\\|y # planted" in text
    assert "<img" not in text and "\n# planted" not in text


def test_a_link_planted_where_a_record_or_a_probe_file_is_written_leaves_its_target_as_it_was(
    tmp_path,
):
    """The record's temporary and the folder check's probe file follow no link: a link at the
    probe's name (the process id) or at the name a record's temporary once had writes nothing
    through it (the temporary's name is fresh, made with O_EXCL: nothing there is written)."""
    from dfl_bench.lifecycle import records

    target = tmp_path / "outside.txt"
    target.write_text("kept\n")
    folder = tmp_path / "records" / "default"
    folder.mkdir(parents=True)
    (folder / f".write-test.{os.getpid()}").symlink_to(target)
    guards.check_writable(folder, "records_dir")
    path = folder / "0123456789abcdef.json"
    path.with_name(f".{path.name}.{os.getpid()}.tmp").symlink_to(target)
    whole = {**dict.fromkeys(records.RECORD_FIELDS), "status": "failed", "seed": 0}
    records.write_record(path, {**whole, "config": whole_config()})
    assert target.read_text() == "kept\n" and records.read_record(path)["status"] == "failed"
    path.unlink()
    path.symlink_to(target)  # the record's own name a link: refused
    with pytest.raises(ValueError, match="a symbolic link"):
        records.write_record(path, {**whole, "config": whole_config()})
    assert target.read_text() == "kept\n"


def test_a_key_an_experiments_yaml_sets_at_the_top_is_a_files_override_too():
    """A search's final stage (`stage=final`, a top-level key of the search experiments) is a
    plain override of the configuration: its records are harvested like the candidates'."""
    from dfl_bench.lifecycle.file_overrides import check_file_overrides, refusal

    final = ["row=s2500_lr2e3", "+experiment=mnist_addition_minute_search", "stage=final"]
    assert check_file_overrides([*final, "seed=3"], "a record") == [*final, "seed=3"]
    assert refusal("stage=final", applied=True) is None
    assert "no key of the configuration" in refusal("nosuch=final")


@pytest.mark.parametrize(
    ("override", "why"),
    [
        ("model.ntn_k=10", None),
        ("model.ntn_bias=True", None),
        ("data.source=idx", None),
        ("data.labeled_fraction=0.05", None),
        ("data.split_seed=null", None),
        ("data.labeled_fraction=2.0", "data.labeled_fraction must lie in (0, 1)"),
        ("augment.degrees=90", "augment.degrees must be at most 45"),
        ("kb.scope=x", "kb.scope='x' is not valid"),
    ],
)
def test_a_files_override_is_judged_by_its_groups_check_among_the_groups_other_values(
    override, why
):
    """One value of a group the job checks whole (data, model, augment, kb) is refused for
    itself, never for the keys beside it that the override does not set."""
    from dfl_bench.lifecycle.file_overrides import refusal

    said = refusal(override)
    assert said is None if why is None else said is not None and said.startswith(why)


def test_a_refused_run_removes_no_folder_a_user_named(tmp_path):
    """Only the default run folder's own parents (outputs/<experiment>/) go with it: an empty
    folder the user named above `hydra.run.dir` (here the working directory itself) stays."""
    import subprocess
    import sys

    (tmp_path / "mine").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "dfl_bench", "net=bn_wide", "net.width=2.5", "profile=smoke",
         "logger=none", f"hydra.run.dir={tmp_path}/mine/out"],
        cwd=tmp_path / "mine", capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )  # fmt: skip
    assert done.returncode == 2 and "net.width must be an integer" in done.stderr
    assert (tmp_path / "mine").is_dir() and not (tmp_path / "mine" / "out").exists()


@pytest.mark.parametrize(
    "override",
    [
        "hydra.run.dir={tmp}/run/${{oc.env:PROBE_SECRET}}",
        "hydra.run.dir={tmp}/run/\\${{oc.env:PROBE_SECRET}}",  # escaped: Hydra resolves it later
        "hydra.run.dir={tmp}/run/$\\{{oc.env\\:PROBE_SECRET\\}}",  # Hydra unescapes it
        "hydra.job.name=${{oc.env:PROBE_SECRET}}",
        "hydra.sweep.subdir=\\${{oc.env:PROBE_SECRET}}",
        "hydra.run.dir={tmp}/run/${{oc.decode:'1'}}",
        "+note=${{oc.env:PROBE_SECRET}}",
    ],
)
def test_an_override_calling_the_environment_resolver_is_one_line_before_hydra_makes_a_folder(
    override, tmp_path
):
    """`hydra.*` keys too: Hydra makes the run folder (named after the secret) and its log
    handler resolves an escaped one again (a traceback showing the secret) before a job's own
    check; the refusal names the key, never the value."""
    import subprocess
    import sys

    secret = "hunter2-0123"
    done = subprocess.run(
        [sys.executable, "-m", "dfl_bench", "profile=smoke", "logger=none",
         f"records_dir={tmp_path}/records", f"hydra.sweep.dir={tmp_path}/sweep",
         override.format(tmp=tmp_path)],
        cwd=tmp_path, capture_output=True, text=True,
        env={**ENV, "PROBE_SECRET": secret, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    key = override.split("=")[0].lstrip("+")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"invalid configuration: {key} calls the resolver 'oc." in done.stderr
    assert secret not in done.stdout + done.stderr and os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "override",
    ["hydra.run.dir=/tmp/x/${now:%H}", "hydra.sweep.subdir=${hydra.job.num}_${hydra.job.id}",
     "hydra.job.name=${hydra:runtime.version}", "hydra.sweep.dir=multirun/${now:%Y-%m-%d}"],
)  # fmt: skip
def test_hydras_own_interpolations_in_its_keys_still_pass_the_command_line_check(override):
    assert preflight.defect([override]) is None
