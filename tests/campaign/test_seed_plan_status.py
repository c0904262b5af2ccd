"""`python -m campaign.seed_plan status` and `run`: the planned seeds whose records
are ok, and multiruns of only the others."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pytest

from campaign import seed_plan
from dfl_bench.reproduction import plan

REPO = Path(__file__).resolve().parents[2]


def test_the_seed_plans_status_counts_the_planned_seeds_whose_records_are_ok(tmp_path, monkeypatch):
    monkeypatch.setattr(plan.os, "cpu_count", lambda: 2)  # two jobs run at once
    p = {
        "profile": "long",
        "cells": {
            "formulas/f1": {"seeds": 3, "override": "row=f1", "wall_time_s": 600.0},
            "formulas/f2": {"seeds": 2, "override": "row=f2", "wall_time_s": 900.0},
        },
    }
    jobs = plan.plan(["formulas"], "long", 4, tmp_path)
    on_gpu = plan.plan(["formulas"], "long", 4, tmp_path, overrides=["trainer=gpu"])
    assert [j.path for j in on_gpu] == [j.path for j in jobs]  # the device is not hashed
    committed = [json.loads(f.read_text()) for f in (REPO / "results/records/formulas").glob("*")]
    record = {  # a committed long record of each row: its config is what the row's jobs hash
        r["row"]: r for r in committed if r["profile"] == "long" and r["row"] in ("f1", "f2")
    }
    written = [
        ("f1", 0, "ok", jobs),
        ("f1", 2, "ok", on_gpu),  # a seed trained on a GPU counts too
        ("f1", 3, "ok", jobs),
        ("f2", 1, "failed", jobs),
        ("f2", 0, "ok", jobs),
    ]
    for row, seed, status, where in written:
        (job,) = [j for j in where if {f"row={row}", f"seed={seed}"} <= set(j.overrides)]
        job.path.parent.mkdir(parents=True, exist_ok=True)
        fields = {"status": status, "seed": seed, "config_hash": job.path.stem}
        config = {**record[row]["config"], "seed": seed}  # a record's seed is its config's
        job.path.write_text(json.dumps({**record[row], **fields, "config": config}))
    finished = seed_plan.finished_seeds(p, tmp_path)
    assert finished == {"formulas/f1": [0, 2], "formulas/f2": [0]}  # f1's seed 3 is not planned
    done = seed_plan.progress(finished, p)
    assert done == {"formulas/f1": (2, 3), "formulas/f2": (1, 2)}
    lines = seed_plan.status_lines(p, done, jobs=2)
    assert lines[:2] == ["  formulas/f1: 2 of 3 seeds", "  formulas/f2: 1 of 2 seeds"]
    assert lines[2] == (  # (600 + 900) s left at two jobs
        "[seed_plan] 3 of 5 planned runs finished; 0 of 2 cells complete; about 0.2 h of "
        "training left at 2 job(s)"
    )
    assert (
        seed_plan.pace(p, seed_plan.planned_jobs(p, tmp_path), "AMD EPYC") is None
    )  # no run names this machine
    assert seed_plan.status_lines(p, done, jobs=2, speed=(0.5, 10))[2].endswith(
        "about 0.2 h of training left at 2 job(s); about 0.1 h at this machine's pace (its last "
        "10 planned runs took 0.50 of their cells' recorded wall times)"
    )


def test_a_machines_pace_is_the_median_of_its_latest_planned_runs_over_their_cells_times(tmp_path):
    p = {
        "profile": "long",
        "cells": {"formulas/f1": {"seeds": 5, "override": "row=f1", "wall_time_s": 100.0}},
    }
    record = json.loads(next((REPO / "results/records/formulas").glob("*.json")).read_text())
    jobs = [j for j in plan.plan(["formulas"], "long", 5, tmp_path) if "row=f1" in j.overrides]
    runs = [  # seed, CPU model, wall time (the cell's: 100 s), day finished
        (0, "A", 20.0, "00"),
        (1, "A", 40.0, "01"),
        (2, "A", 60.0, "02"),
        (3, "B", 200.0, "03"),
        (4, "A", 80.0, "04"),
    ]
    for seed, cpu, wall, day in runs:
        (job,) = [j for j in jobs if f"seed={seed}" in j.overrides]
        job.path.parent.mkdir(parents=True, exist_ok=True)
        fields = {"seed": seed, "config_hash": job.path.stem, "wall_time_s": wall}
        fields["config"] = {**record["config"], "seed": seed}
        machine = {**(record.get("machine") or {}), "cpu": cpu}
        job.path.write_text(
            json.dumps({**record, **fields, "machine": machine, "finished": f"2026-12-{day}"})
        )
    latest = seed_plan.pace(p, seed_plan.planned_jobs(p, tmp_path), "A", last=3)
    assert latest == (0.6, 3)  # 0.8, 0.6, 0.4: A's latest three (B's 2.0 or A's first: 0.8, 0.4)
    assert seed_plan.pace(p, seed_plan.planned_jobs(p, tmp_path), "B") is None


def test_the_seed_plans_run_launches_only_the_unfinished_seeds_of_unfinished_cells(tmp_path):
    p = {
        "profile": "long",
        "cells": {
            "formulas/f1": {"seeds": 3, "override": "row=f1", "wall_time_s": 600.0},
            "formulas/f2": {"seeds": 2, "override": "row=f2", "wall_time_s": 900.0},
        },
    }
    args = argparse.Namespace(
        jobs=2, records=str(tmp_path), logger="none", device="cpu", overrides=["threads=1"]
    )
    args.stack_size = 8
    args.sweeps = Path("multirun/seed_plan/now")
    finished = {"formulas/f1": [0, 2], "formulas/f2": [0, 1]}
    got = seed_plan.commands(p, finished, args)
    job = [sys.executable, "-m", "dfl_bench", "-m", "+experiment=formulas", "row=f1", "seed=1"]
    job += ["profile=long", f"records_dir={tmp_path}", "logger=none", "progress_bar=false"]
    job += ["hydra.sweep.dir=multirun/seed_plan/now/formulas/f1"]  # cells may start at once
    assert got == {
        "formulas/f1": [
            *job,
            *("hydra/launcher=parallel", "hydra.launcher.n_jobs=2"),
            "threads=null",
            "threads=1",
        ],
        "formulas/f2": None,  # every seed finished: no multirun
    }
    split = {"formulas/f1": [2], "formulas/f2": [0]}  # finished; part k of 2: seeds % 2 == k
    odd = seed_plan.commands(p, split, args, (1, 2))
    assert odd["formulas/f1"][6] == "seed=1" and odd["formulas/f2"][6] == "seed=1"
    assert "hydra.sweep.dir=multirun/seed_plan/now/formulas/f1/part1" in odd["formulas/f1"]
    even = seed_plan.commands(p, split, args, (0, 2))
    assert even["formulas/f1"][6] == "seed=0" and even["formulas/f2"] is None  # f2: 0 finished
    args.device = "gpu"  # on a GPU the cell's seeds train as one stack
    (on_gpu,) = filter(None, seed_plan.commands(p, finished, args).values())
    stack = ["hydra/launcher=stack", "trainer=gpu", "hydra.launcher.stack_size=8"]
    assert on_gpu == [*job, *stack, "threads=1"]


def test_the_seed_plans_run_trains_in_the_checkout_it_is_given(tmp_path, monkeypatch):
    (tmp_path / "plan").mkdir()
    p = {"profile": "long", "cells": {"formulas/f1": {"seeds": 1, "override": "row=f1"}}}
    (tmp_path / "plan" / "plan.json").write_text(json.dumps(p))
    ran = []
    monkeypatch.setattr(
        seed_plan.subprocess,
        "run",
        lambda command, cwd, env: (
            ran.append((command, cwd, env["PYTHONPATH"])) or argparse.Namespace(returncode=0)
        ),
    )
    frozen = tmp_path / "frozen"
    (frozen / "records").mkdir(parents=True)  # a run trains into an existing records folder
    argv = ["run", "--out", str(tmp_path / "plan"), "--repo", str(frozen)]
    assert seed_plan.main([*argv, "--records-dir", "records"]) == 0
    ((command, cwd, path),) = ran
    assert cwd == frozen and "row=f1" in command and "seed=0" in command
    assert path.split(os.pathsep)[0] == str(frozen)  # its code, whatever is installed
    assert "records_dir=records" in command  # the checkout's own folder, where it is read too
    (job,) = [
        j for j in plan.plan(["formulas"], "long", 1, frozen / "records") if "row=f1" in j.overrides
    ]
    job.path.parent.mkdir(parents=True, exist_ok=True)
    record = json.loads(next((REPO / "results/records/formulas").glob("*.json")).read_text())
    fields = {"seed": 0, "config_hash": job.path.stem, "config": {**record["config"], "seed": 0}}
    job.path.write_text(json.dumps({**record, **fields}))
    ran.clear()
    assert seed_plan.main([*argv, "--records-dir", "records"]) == 0 and ran == []  # finished


def test_the_seed_plans_run_on_a_gpu_takes_the_last_cells_first_several_at_once(
    tmp_path, monkeypatch
):
    cells = {f"formulas/f{i}": {"seeds": 2, "override": f"row=f{i}"} for i in (1, 2, 3)}
    (tmp_path / "plan.json").write_text(json.dumps({"profile": "long", "cells": cells}))
    monkeypatch.setattr(seed_plan, "finished_seeds", lambda p, d: {c: [0] for c in p["cells"]})
    ran = []
    monkeypatch.setattr(
        seed_plan.subprocess,
        "run",
        lambda command, cwd, env: (
            ran.append(command) or argparse.Namespace(returncode=len(ran) == 1)
        ),
    )
    argv = ["run", "cuda_graph=false", "--out", str(tmp_path), "--device", "gpu", "--reverse"]
    assert seed_plan.main([*argv, "--parallel", "1"]) == 1  # the first multirun failed
    assert [c[5] for c in ran] == ["row=f3", "row=f2", "row=f1"]  # beside a run from the first
    assert all("trainer=gpu" in c and c[-1] == "cuda_graph=false" and "seed=1" in c for c in ran)
    ran.clear()
    assert seed_plan.main([*argv, "--parallel", "3"]) == 1 and len(ran) == 3


@pytest.mark.parametrize(
    ("override", "why"),
    [
        ("seed=5", "run trains each cell's seeds of the plan"),
        ("profile=smoke", "run trains at the plan's profile"),
        ("+experiment=tnorms", "run trains the plan's cells"),
        ("records_dir=elsewhere", "set the records folder with --records-dir"),
        ("++records_dir='elsewhere'", "set the records folder with --records-dir"),
        ("logger=csv", "set the logger with --logger"),
        ("hydra.sweep.dir=s", "the launcher is set with --device, --jobs, --parallel"),
        ("row=f2", "run trains the plan's cells as planned"),
        ("kb.scope=formula", "run trains the plan's cells as planned"),
        ("experiment_name=mine", "run trains the plan's cells as planned"),
        ("trainer=gpu", "the GPU with --device gpu"),
    ],
)
def test_the_seed_plans_run_refuses_an_override_of_what_it_plans(
    override, why, tmp_path, monkeypatch, capsys
):
    """plan.check_planned: one line naming the override and how run sets it, exit 2, nothing
    trains (an extra seed=, records_dir= trained other runs than the plan's and said done)."""
    cells = {"formulas/f1": {"seeds": 1, "override": "row=f1"}}
    (tmp_path / "plan.json").write_text(json.dumps({"profile": "long", "cells": cells}))
    ran = []
    monkeypatch.setattr(seed_plan.subprocess, "run", lambda *a, **k: ran.append(a))
    with pytest.raises(SystemExit) as stop:
        seed_plan.main(["run", override, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and ran == [] and err.count("\n") == 1, err
    assert err.startswith(f"[seed_plan] error: {override}: ") and why in err, err


def test_the_seed_plans_run_looks_for_finished_seeds_when_each_cell_starts(
    tmp_path, monkeypatch, capsys
):
    cells = {f"formulas/f{i}": {"seeds": 2, "override": f"row=f{i}"} for i in (1, 2)}
    (tmp_path / "plan.json").write_text(json.dumps({"profile": "long", "cells": cells}))
    done = {cell: [] for cell in cells}  # what the records say now
    monkeypatch.setattr(seed_plan, "finished_seeds", lambda p, d: {c: done[c] for c in p["cells"]})

    ran = []

    def run(command, cwd, env):  # while f1 trains, another run of the plan finishes f2
        ran.append(command)
        done["formulas/f2"] = [0, 1]
        return argparse.Namespace(returncode=0)

    monkeypatch.setattr(seed_plan.subprocess, "run", run)
    assert seed_plan.main(["run", "--out", str(tmp_path)]) == 0
    assert len(ran) == 1 and "row=f1" in ran[0]
    assert "[seed_plan] formulas/f2 finished" in capsys.readouterr().out


def test_on_the_cpu_each_cells_seeds_come_in_one_part_per_worker(tmp_path, monkeypatch, capsys):
    cells = {f"formulas/f{i}": {"seeds": 5, "override": f"row=f{i}"} for i in (1, 2)}
    (tmp_path / "plan.json").write_text(json.dumps({"profile": "long", "cells": cells}))
    done = {"formulas/f1": [0, 1, 2], "formulas/f2": [0, 1, 2, 4]}
    monkeypatch.setattr(seed_plan, "finished_seeds", lambda p, d: {c: done[c] for c in p["cells"]})
    ran = []
    monkeypatch.setattr(
        seed_plan.subprocess,
        "run",
        lambda command, cwd, env: ran.append(command) or argparse.Namespace(returncode=0),
    )
    assert seed_plan.main(["run", "--out", str(tmp_path), "--parallel", "2"]) == 0
    seeds = sorted((c[5], c[6]) for c in ran)  # f1's 3 and 4 at once, f2's 3 alone
    assert seeds == [("row=f1", "seed=3"), ("row=f1", "seed=4"), ("row=f2", "seed=3")]
    assert "[seed_plan] formulas/f2 (part 1 of 2) finished" in capsys.readouterr().out


def test_status_without_a_plan_or_with_a_records_folder_that_is_not_there_is_one_line(
    tmp_path, capsys
):
    import pytest

    with pytest.raises(SystemExit) as no_plan:
        seed_plan.main(["status", "--out", str(tmp_path / "none")])
    with pytest.raises(SystemExit) as no_folder:
        seed_plan.main(["status", "--records-dir", str(tmp_path / "missing")])
    assert no_plan.value.code == no_folder.value.code == 2
    err = capsys.readouterr().err
    assert "no seed plan at" in err and "is no folder" in err and "Traceback" not in err


def test_a_refused_plan_file_is_one_line_without_the_usage_block(tmp_path, capsys):
    """A plan file is a file from others: each refusal of one is `[seed_plan] error: ...`, exit
    2, printable, not argparse's usage block."""
    import pytest

    cell = {"seeds": 1, "override": "kb=sum9"}
    for text, said in [
        ('{"profile": "paper", "cells": {"best/sum9": {"seeds": NaN}}}', "NaN is no JSON number"),
        ('{"cells": {}, "cells": {}}', "gives the key 'cells' twice"),
        (json.dumps({"profile": "paper", "cells": {"best/x\x1b]0;P\x07": cell}}), "\\x1b]0;P"),
        (json.dumps({"profile": "paper", "cells": {"best/sum9": {**cell, "seeds": True}}}),
         "no whole number of seeds"),
        (json.dumps({"profile": "paper", "cells": {"best/sum9": {
            "seeds": 1, "override": "kb.w_dfl=${oc.env:HOME}"}}}), "an interpolation"),
    ]:  # fmt: skip
        (tmp_path / "plan.json").write_text(text)
        with pytest.raises(SystemExit) as refused:
            seed_plan.main(["status", "--out", str(tmp_path)])
        err = capsys.readouterr().err
        assert refused.value.code == 2 and err.startswith("[seed_plan] error: ") and said in err
        assert err.endswith("\n") and err[:-1].isprintable()  # one line, no terminal escape


def test_a_plan_from_a_records_folder_without_records_is_a_usage_error(tmp_path, capsys):
    import pytest

    (tmp_path / "records").mkdir()
    with pytest.raises(SystemExit) as empty:
        seed_plan.main(["plan", "--records-dir", str(tmp_path / "records"), "--out", str(tmp_path)])
    assert empty.value.code == 2 and "holds no record" in capsys.readouterr().err
    assert not (tmp_path / "plan.json").exists()


def test_a_plan_with_an_undefined_delta_is_written_as_json_the_one_reader_takes(tmp_path):
    from campaign import seed_plan
    from dfl_bench.untrusted import read_json

    needs = {"profile": "long", "margins": {}, "needs": [{"claim": "c", "delta": float("nan")}]}
    seed_plan.write_plan(tmp_path, needs, "# Plan\n\nWritten by `python -m campaign.seed_plan`\n")
    assert read_json(tmp_path / "plan.json") == {**needs, "needs": [{"claim": "c", "delta": None}]}


def test_every_committed_json_file_is_json_the_one_reader_takes():
    """Plans, probe files, traces and records under results/ (NaN is no JSON: RFC 8259)."""
    from dfl_bench.untrusted import read_json

    files = sorted((REPO / "results").rglob("*.json"))
    assert len(files) > 1000
    for path in files:
        read_json(path, expect=object)


def test_the_key_an_experiment_sweeps_is_read_from_its_yaml_once_a_process():
    """read_plan checks every cell of the plan at every profile rendered: the experiment's yaml
    is read for its swept key once (as cell_configs.own_budget reads it), not once a cell."""
    from campaign import plan_file

    plan_file.swept_key.cache_clear()
    assert [plan_file.swept_key(e) for e in ("formulas", "best", "formulas")] == [
        "row",
        "kb",
        "row",
    ]
    assert plan_file.swept_key.cache_info().hits == 1
