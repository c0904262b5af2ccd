"""`make reproduce-tables`: the plan (every sweep job times the seeds, its record path, done or
missing, the time estimate), bad input in one line, failed jobs reported while the rest go on,
resuming, and a smoke-profile reproduction of every experiment (and, with the renderer, every
table and figure)."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import warm_cli
from jobs import whole_config

from dfl_bench.lifecycle import records
from dfl_bench.reproduction import plan, reproduce
from dfl_bench.results import cell_configs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Run in tmp_path (multirun logs land there), the jobs importing this checkout, no W&B."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("WANDB_MODE", "disabled")
    return tmp_path


@pytest.fixture
def in_tmp_warm(in_tmp, monkeypatch):
    """As in_tmp, the multiruns that reproduce.main starts forked from a server that has torch
    and Lightning imported (tests/warm_cli.py) instead of fresh interpreters."""
    monkeypatch.setattr(subprocess, "Popen", warm_cli.popen(subprocess.Popen))
    return in_tmp


def reproduce_args(tmp: Path, *args: str, render: bool = False) -> list[str]:
    """Command-line arguments of a smoke reproduction into tmp (records, checkpoints, logs);
    the tables render afterwards only with `render` (into `tmp / "results"`)."""
    return [
        "--profile=smoke",
        f"--records={tmp / 'records'}",
        "--logger=none",
        "--poll=0.5",
        f"--out={tmp / 'results'}" if render else "--no-render",
        *args,
        f"checkpoint_dir={tmp / 'checkpoints'}",
    ]


def test_every_experiment_and_the_default_config_are_selectable():
    names = cell_configs.selected("")
    assert names[-1] == cell_configs.DEFAULT
    assert {"same_symmetric", "baseline", "best"} <= set(names)
    assert cell_configs.selected("tnorms, best,tnorms") == ["tnorms", "best"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tables=tnorms,nope"], r"unknown experiment 'nope' in TABLES; valid: \['aggregation'"),
        (
            ["--profile=fast"],
            r"unknown profile 'fast'; valid: "
            r"\['frontier', 'long', 'minute', 'paper', 'quick', 'smoke'\]",
        ),
        (["--seeds=0"], r"SEEDS must be >= 1 \(got 0\)"),
        (["--spread-seeds=-1"], r"SPREAD_SEEDS must be >= 0 \(got -1\)"),
        (["--jobs=0"], r"JOBS must be >= 1 \(got 0\)"),
        (["--jobs=two"], r"argument --jobs: invalid int value: 'two'"),
        (["--logger=tensorboard"], r"unknown logger 'tensorboard'; valid: \['csv', 'none'"),
        (["profile.max_steps=10"], r"profile.max_steps=10: set the budget with --profile"),
        (["--tables=,"], r"TABLES=',' names no experiment \(leave it empty for all\)$"),
        (
            ["progress_bar=false", "kb.scope=formula"],
            r"kb.scope=formula changes what a table cell means: name a separate "
            r"experiment \(experiment_name=<new name>, as make scope-comparison does\)$",
        ),
        (  # the table a row reads its values from: what it trains under its name
            ["families.product.w_dfl=0.001", "experiment_name=mine"],
            r"families.product.w_dfl=0.001: a reproduction trains every row of its tables as "
            r"declared",
        ),
        (["nets.lenet.width=8"], r"nets.lenet.width=8: a reproduction trains every row"),
        (
            ["rows.godel_S.tnorm.name=product", "experiment_name=mine"],
            r"rows.godel_S.tnorm.name=product: a reproduction trains every row of its tables as "
            r"declared",
        ),
        (["+stages.final=0.2"], r"\+stages.final=0.2: a reproduction trains every row"),
        (["row=no_such"], r"row=no_such: a reproduction trains every row of its tables"),
        (
            ["+trainer.gradient_clip_val=1", "experiment_name=tnorms"],
            r"experiment_name=tnorms is a table's: name a separate experiment for a changed",
        ),
        (["trainer=gpu"], r"trainer=gpu: train on the GPU with --device gpu \(DEVICE=gpu\)"),
        # what the reproduction sets itself (plan.PLANNED): its records, seeds, logs, launcher
        (["records_dir=elsewhere"], r"error: records_dir=elsewhere: set the records folder with "
         r"--records-dir \(RECORDS_DIR=\): the one the reproduction plans, counts and locks$"),
        (["++records_dir='x'"], r"\+\+records_dir='x': set the records folder with --records-dir"),
        (["seed=5", "experiment_name=mine"], r"seed=5: set the seeds 0..n-1 with --seeds"),
        (["+experiment=tnorms"], r"\+experiment=tnorms: choose the experiments with --tables"),
        (["logger=none"], r"logger=none: set the logger with --logger \(LOGGER=\)$"),
        (["hydra.sweep.dir=s"], r"hydra.sweep.dir=s: the launcher is set with --device, --jobs"),
        (["hydra/launcher=parallel"], r"hydra/launcher=parallel: the launcher is set with"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_the_valid_choices(args, message, tmp_path, capsys):
    """Nothing trains, nothing is written: exit 2 and one line."""
    assert reproduce.main([f"--records={tmp_path}", "--tables=best", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("[reproduce] error: ")
    assert re.search(message, err), err
    assert not any(tmp_path.iterdir())


TABLES_OWN = "experiment_name=tnorms is a table's: name a separate experiment for a changed "
GPU_LINE = "trainer=gpu: train on the GPU with --device gpu (DEVICE=gpu), which fills the same "


@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        *(([named, "kb.w_dfl=5"], TABLES_OWN) for named in (
            "experiment_name=tnorms", "experiment_name='tnorms'", "experiment_name=tnorms ",
            'experiment_name="tnorms"', "experiment_name= tnorms", "+experiment_name=tnorms",
        )),
        *(([gpu], GPU_LINE) for gpu in (
            "trainer=gpu", "++trainer=gpu", "trainer='gpu'", "+trainer=gpu", 'trainer="gpu"',
        )),
    ],
)  # fmt: skip
def test_every_spelling_of_an_override_gets_its_one_answer(overrides, line, tmp_path):
    """The cell-meaning check reads each override as Hydra parses it (plan.check_cell_meaning,
    override_gate.by_key): a quoted or spaced table name is the table's, a quoted or `++`
    trainer=gpu the GPU's line (parse_args: what main refuses before anything runs)."""
    with pytest.raises(ValueError, match=f"^{re.escape(line)}"):
        reproduce.parse_args([f"--records={tmp_path}", "--tables=tnorms", *overrides])


def test_a_gpu_reproduction_without_a_gpu_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(reproduce, "cuda_available", lambda: False)
    assert reproduce.main([f"--records={tmp_path}", "--tables=best", "--device=gpu"]) == 2
    err = capsys.readouterr().err
    assert (
        err == "[reproduce] error: --device gpu: this machine has no CUDA GPU; use --device cpu\n"
    )


@pytest.mark.parametrize("planted", ["records", "lock"])
def test_a_lock_that_cannot_be_written_is_one_line_and_exit_2(planted, tmp_path, capsys):
    """A records folder that is a link, or a lock that is one: invalid input (make goes on to
    render after an exit of 0 or 1), nothing written through the link."""
    real = tmp_path / "real"
    real.mkdir()
    records = tmp_path / "records"
    if planted == "records":
        records.symlink_to(real, target_is_directory=True)
    else:
        records.mkdir()
        (records / reproduce.LOCK).symlink_to(real / "lock")
    assert reproduce.main([f"--records={records}", "--tables=best"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"[reproduce] error: --records-dir {records}: cannot write its lock ")
    assert err.count("\n") == 1 and "a symbolic link" in err and not list(real.iterdir())


def test_a_second_reproduction_into_the_same_records_says_who_runs_and_exits_3(tmp_path, capsys):
    with reproduce.reproduction_lock(tmp_path):
        assert reproduce.main([f"--records={tmp_path}", "--tables=best"]) == reproduce.EXIT_BUSY
    err = capsys.readouterr().err
    assert re.fullmatch(
        rf"\[reproduce\] already running \(pid {os.getpid()}, since [0-9-]+ [0-9:]+\) into "
        rf"{tmp_path}: wait for it, or stop it and rerun this command to resume\n",
        err,
    ), err
    assert [p.name for p in tmp_path.iterdir()] == [reproduce.LOCK]


@pytest.mark.slow
def test_plan_expands_each_sweep_times_the_seeds(tmp_path):
    jobs = plan.plan(["same_symmetric", "sigmoidal_s", "best"], "smoke", 2, tmp_path)
    rows = [j.overrides for j in jobs if j.experiment == "same_symmetric"]
    assert len(rows) == 12 * 2 and ("row=godel_R", "seed=1") in rows
    s_values = {j.overrides[0] for j in jobs if j.experiment == "sigmoidal_s"}
    assert len(s_values) == 8 and "implication.s=2.5" in s_values
    assert {j.overrides for j in jobs if j.experiment == "best"} == {
        (f"kb={p}", f"seed={s}") for p in ("sum9", "both") for s in (0, 1)
    }
    assert len({j.path for j in jobs}) == len(jobs)
    assert all(j.path.parent == tmp_path / j.experiment and not j.done() for j in jobs)


@pytest.mark.slow
def test_spread_seeds_apply_to_the_baseline_and_default_config_only(tmp_path):
    jobs = plan.plan(["tnorms", "baseline", "default"], "smoke", 1, tmp_path, spread_seeds=3)
    seeds = {
        name: sorted(j.overrides[-1] for j in jobs if j.experiment == name)
        for name in ("tnorms", "baseline", "default")
    }
    assert seeds["default"] == ["seed=0", "seed=1", "seed=2"]
    assert seeds["baseline"] == sorted(seeds["default"] * 2)  # rows ce_pair and ce_only
    assert set(seeds["tnorms"]) == {"seed=0"} and len(seeds["tnorms"]) == 7
    assert {j.path.parent.name for j in jobs if j.experiment == "default"} == {"default"}


def test_plan_names_every_invalid_job_before_running_any(tmp_path):
    with pytest.raises(ValueError, match=r"2 invalid job\(s\): default seed=0: .*; default seed=1"):
        plan.plan(["default"], "smoke", 2, tmp_path, overrides=["tnorm.p=-1"])


def test_time_estimate_from_records_of_the_profile_else_the_default(tmp_path):
    assert plan.job_seconds("quick", tmp_path) == plan.JOB_SECONDS["quick"]
    base = {k: None for k in records.RECORD_FIELDS} | {
        "config": whole_config("profile=long"),
        "steps": 10000,
        "test_accuracy": 0.5,
        "seed": 0,
    }
    for i, (status, profile, wall) in enumerate(
        [("ok", "quick", 10.0), ("ok", "quick", 30.0), ("ok", "quick", 20.0),
         ("failed", "quick", 1.0), ("ok", "paper", 999.0)]
    ):  # fmt: skip
        record = {**base, "status": status, "profile": profile, "wall_time_s": wall}
        record["config"] = whole_config(f"profile={profile}")
        record["steps"] = record["config"]["profile"]["max_steps"]
        records.write_record(tmp_path / "x" / f"{i}.json", record)
    assert plan.job_seconds("quick", tmp_path) == 20.0 + plan.JOB_OVERHEAD_S
    assert plan.estimate(10, 6.0, 1) == 60.0
    assert plan.estimate(10, 6.0, 2) == 60.0 / min(2, os.cpu_count() or 1)


@pytest.mark.parametrize("stack", [5, "x" * 1000])
def test_a_records_stack_that_is_no_list_of_jobs_is_no_whole_record(tmp_path, stack):
    """A record's stack divides its wall time in the GPU estimate: an int was a TypeError
    traceback of the planner, a text of 1,000 characters an estimate 1,000 times short."""
    record = {k: None for k in records.RECORD_FIELDS} | {"test_accuracy": 0.5}
    record["config"] = whole_config("profile=long")
    record["steps"] = record["config"]["profile"]["max_steps"]
    record |= {"seed": 0, "status": "ok", "profile": "long", "wall_time_s": 40.0, "stack": stack}
    assert "is no stack" in records.invalid(record)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "s.json").write_text(json.dumps(record))
    assert plan.job_seconds("long", tmp_path, "gpu") == 10000 * plan.GPU_ITERATION_S


def test_multirun_command_selects_the_experiment_seeds_and_launcher(tmp_path):
    args = reproduce.parse_args(
        ["--jobs=2", f"--records={tmp_path}", "experiment_name=k8", "model.ntn_k=8"]
    )
    command = reproduce.multirun_command("tnorms", args, 3, tmp_path / "logs")
    assert command[1:5] == ["-m", "dfl_bench", "-m", "+experiment=tnorms"]
    assert "seed=0,1,2" in command and "hydra.launcher.n_jobs=2" in command
    assert command[-1] == "model.ntn_k=8" and f"records_dir={tmp_path}" in command
    one = reproduce.multirun_command("default", reproduce.parse_args([]), 1, tmp_path)
    assert not any(a.startswith(("+experiment", "hydra/launcher")) for a in one)


def test_the_gpu_path_trains_stacks_and_estimates_a_stacks_share(tmp_path, monkeypatch):
    monkeypatch.setattr(reproduce, "cuda_available", lambda: True)
    args = reproduce.parse_args(["--device=gpu", "--jobs=3", f"--records={tmp_path}"])
    command = reproduce.multirun_command("tnorms", args, 1, tmp_path / "logs")
    assert {"hydra/launcher=stack", "trainer=gpu", "hydra.launcher.stack_size=64"} <= set(command)
    assert plan.job_seconds("long", tmp_path, "gpu") == 10000 * plan.GPU_ITERATION_S
    base = {k: None for k in records.RECORD_FIELDS} | {
        "config": whole_config("profile=long"),
        "steps": 10000,
        "test_accuracy": 0.5,
        "seed": 0,
    }
    for name, wall, stack in (("s", 40.0, ["x/" + "a" * 16, "x/" + "b" * 16]), ("a", 600.0, None)):
        record = {**base, "status": "ok", "profile": "long", "wall_time_s": wall, "stack": stack}
        records.write_record(tmp_path / "x" / f"{name}.json", record)
    assert plan.job_seconds("long", tmp_path, "gpu") == 20.0  # the run's share of its stack
    assert plan.job_seconds("long", tmp_path, "cpu") == 600.0 + plan.JOB_OVERHEAD_S
    assert plan.estimate(10, 20.0, 3, "gpu") == 200.0
    with pytest.raises(ValueError, match="--stack-size"):
        reproduce.parse_args(["--device=gpu", "--stack-size=0"])


@pytest.mark.slow
def test_failed_jobs_are_reported_and_the_rest_go_on(in_tmp_warm, capsys):
    args = reproduce_args(in_tmp_warm, "--tables=best,default", "--spread-seeds=1")
    assert reproduce.main([*args, "experiment_name=poisoned", "debug.nan_at_step=1"]) == 1
    out = capsys.readouterr().out
    assert "3 job(s) failed:" in out and "0/3 jobs ok" in out
    for job in ("best kb=sum9 seed=0", "best kb=both seed=0", "default seed=0"):
        assert f"  {job}: non-finite loss" in out


# One experiment of each kind of job: the paper's task (formulas: the paper table of the fewest
# rows), MNIST addition (over the carries; its enumerated knowledge base trains in
# tests/tasks), the seed spread (default: no +experiment) and the best row's knowledge bases.
# Every row of every experiment composes to valid operators (tests/lifecycle/test_cli_configs.py)
# and every operator's DFL term runs (tests/operators, tests/tasks/mnist).
SMOKE_TABLES = ("formulas", "mnist_addition_digits", "best", "default")


@pytest.mark.slow
def test_smoke_reproduction_of_one_experiment_of_each_kind_then_a_rerun_skips_it(
    in_tmp_warm, capsys
):
    chosen = f"--tables={','.join(SMOKE_TABLES)}"
    args = reproduce_args(in_tmp_warm, "--spread-seeds=2", chosen, render=True)
    assert reproduce.main(args) == 0  # then renders, as make reproduce-tables does
    first = capsys.readouterr().out
    n = int(re.search(r"(\d+) jobs, 0 done, \1 to run", first).group(1))
    planned = plan.plan(list(SMOKE_TABLES), "smoke", 1, in_tmp_warm / "records", spread_seeds=2)
    assert n == len(planned) and f"all {n} jobs ok" in first
    assert len(re.findall(rf"\[reproduce\] {n}/{n} jobs ok", first)) == 1  # the last line once
    tables = {p.stem for p in (in_tmp_warm / "results" / "tables").glob("*.md")}
    assert set(SMOKE_TABLES) - {cell_configs.DEFAULT} <= tables
    assert any((in_tmp_warm / "results" / "figures").glob("*.png"))
    rerun = reproduce_args(in_tmp_warm, "--spread-seeds=2", "--tables=best,default")
    assert reproduce.main(rerun) == 0
    second = capsys.readouterr().out
    assert "4 jobs, 4 done, 0 to run" in second and "[dfl_bench]" not in second
    found = [json.loads(p.read_text()) for p in (in_tmp_warm / "records").rglob("*.json")]
    assert len(found) == n and {(r["status"], r["profile"], r["steps"]) for r in found} == {
        ("ok", "smoke", 4)
    }
    assert {r["experiment"] for r in found} == set(SMOKE_TABLES)


@pytest.mark.slow
def test_only_whole_records_count_as_done_and_the_others_are_named_once(in_tmp_warm, capsys):
    args = reproduce_args(in_tmp_warm, "--tables=best")
    stub, other = (job.path for job in plan.plan(["best"], "smoke", 1, in_tmp_warm / "records"))
    stub.parent.mkdir(parents=True)
    stub.write_text('{"status": "ok"}')
    other.write_text("[]")
    (stub.parent / "bad.json").write_text("{")
    assert reproduce.main(args) == 0
    out = capsys.readouterr()
    assert "2 jobs, 0 done, 2 to run" in out.out and "all 2 jobs ok" in out.out
    assert out.out.count(f"{stub}: not a run record (lacks the fields") == 1
    assert out.out.count(f"{other}: not a run record (a JSON list") == 1
    assert out.out.count("bad.json: not a run record (not JSON") == 1
    assert "rerunning" not in out.out + out.err
    assert stub.with_name(stub.name + ".invalid").read_text() == '{"status": "ok"}'
    assert records.is_done(stub) and records.is_done(other)


def test_reproductions_started_in_one_second_get_folders_of_their_own(tmp_path):
    now = reproduce.datetime(2026, 1, 2, 3, 4, 5)
    first, second = (reproduce.log_folder(tmp_path, now) for _ in range(2))
    assert first != second and first.is_dir() and second.is_dir()
    assert second.name == "2026-01-02_03-04-05-2"


def processes_naming(text: str) -> list[int]:
    """Pids of the processes whose command line contains `text`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and text in (proc / "cmdline").read_text():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def sleeper(code: str) -> subprocess.Popen:
    """A Python process in a process group of its own: runs `code`, says so, sleeps."""
    script = f"{code}\nprint('ready', flush=True)\nimport time\ntime.sleep(60)"
    command = [sys.executable, "-c", script]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)


def test_only_a_process_that_handles_sigterm_holds_a_stopped_group(monkeypatch):
    # what a stopped multirun leaves: a job saving its checkpoint (a SIGTERM handler), an idle
    # joblib worker (its job caught the signal; SIGTERM is back to the default), a resource
    # tracker (ignores SIGTERM) and, where nothing reaps the orphans, exited workers (zombies)
    catcher = sleeper("import signal; signal.signal(signal.SIGTERM, lambda *a: None)")
    idle = sleeper("pass")
    tracker = sleeper("import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)")
    exited = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    try:
        for proc in (catcher, idle, tracker):
            assert proc.stdout.readline() == "ready\n"
        while Path(f"/proc/{exited.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            time.sleep(0.01)  # exiting; not reaped: this test is its parent, waiting below
        assert reproduce.group_stopping(catcher.pid)
        assert not any(reproduce.group_stopping(p.pid) for p in (idle, tracker, exited))
        with monkeypatch.context() as patched:
            patched.setattr(reproduce.time, "sleep", lambda s: pytest.fail("waited for nothing"))
            for proc in (idle, tracker, exited):
                reproduce.stop_leftovers(proc.pid)
        assert idle.wait(timeout=10) == tracker.wait(timeout=10) == -signal.SIGKILL
        monkeypatch.setattr(reproduce, "ORPHAN_GRACE_S", 0.5)
        started = time.monotonic()
        reproduce.stop_leftovers(catcher.pid)  # given the grace, then killed
        assert catcher.wait(timeout=10) == -signal.SIGKILL
        assert time.monotonic() - started >= 0.5
    finally:
        for proc in (catcher, idle, tracker, exited):
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "code", "jobs"),
    [(signal.SIGINT, 130, 1), (signal.SIGTERM, 143, 2)],  # both signals, both launchers
)
def test_a_signal_stops_the_whole_reproduction_and_says_how_to_resume(in_tmp, signum, code, jobs):
    # jobs=2: the joblib launcher, whose idle workers outlive its driver and hold the output
    args = reproduce_args(in_tmp, "--tables=tnorms", f"--jobs={jobs}")
    command = [sys.executable, "-m", "dfl_bench.reproduction.reproduce", *args]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:
        if line.startswith("[dfl_bench] tnorms"):  # the first job is done, the next one runs
            break
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code and "Traceback" not in err, err
    assert err.count("\n") == 1 and "resume with the same command" in err
    assert "python -m dfl_bench.reproduction.reproduce --profile=smoke" in err
    assert processes_naming(str(in_tmp / "records")) == []  # no orphaned multirun
    log = next((in_tmp / "multirun" / "reproduce").glob("*/tnorms.log")).read_text()
    assert "SIGTERM at step" in log or "Traceback" not in log


@pytest.mark.slow
def test_a_signal_stops_every_experiment_running_at_once_on_a_gpu(in_tmp):
    # the multiruns are stand-ins that wait (this machine may have no GPU); two run at once
    marker = f"stand-in-{in_tmp.name}"
    driver = (
        "import sys\n"
        "from dfl_bench.reproduction import reproduce\n"
        "stand_in = 'import time; print(\"[dfl_bench] started\", flush=True); time.sleep(300)'\n"
        f"marker = 'stand-' + {marker[6:]!r}\n"  # only the stand-ins' command lines hold it
        "reproduce.multirun_command = lambda *a: [sys.executable, '-c', stand_in, marker]\n"
        "reproduce.cuda_available = lambda: True\n"
        "sys.exit(reproduce.main(sys.argv[1:]))\n"
    )
    args = reproduce_args(in_tmp, "--tables=tnorms,best", "--device=gpu", "--jobs=2")
    command = [sys.executable, "-c", driver, *args]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = 0
    for line in proc.stdout:
        started += line.startswith("[dfl_bench] started")
        if started == 2:
            break
    assert len(processes_naming(marker)) == 2
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err, err
    assert processes_naming(marker) == []


def test_multiruns_echoing_at_once_print_whole_lines(capsys):
    # print writes a line's text and its newline apart: unlocked, two threads mix them
    quiet, sink = threading.Event(), io.StringIO()
    streams = [[f"[dfl_bench] run {k} line {i}\n" for i in range(3000)] for k in range(2)]
    threads = [threading.Thread(target=reproduce.echo, args=(s, sink, quiet)) for s in streams]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as under a loaded machine's pipes
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6000 and all(
        re.fullmatch(r"\[dfl_bench\] run \d line \d+", x) for x in lines
    )


def test_a_fresh_clone_at_the_defaults_has_nothing_to_train():
    """Every committed table at `make reproduce-tables`' defaults is done: the tables beyond
    the paper reproduced at another budget stay out (named), and a pinned budget never mixes."""
    args = reproduce.parse_args([])
    assert args.profile == "quick" and set(args.aside) == {
        n for n in cell_configs.BEYOND_BUDGETS if "quick" not in cell_configs.BEYOND_BUDGETS[n]
    }
    jobs = plan.plan(
        args.names, args.profile, args.seeds, REPO / cell_configs.RECORDS, args.spread_seeds
    )
    assert jobs and [j for j in jobs if not j.done()] == []


def test_an_experiment_that_pins_its_budget_trains_at_its_own_whatever_the_profile(tmp_path):
    name = "digit_ceiling_nets"
    assert (
        cell_configs.own_budget(name) == "frontier_nets"
        and cell_configs.own_budget("baseline") is None
    )
    assert cell_configs.budget_overrides(name, "quick") == []
    assert cell_configs.budget_overrides("baseline", "quick") == ["profile=quick"]
    at = {p: [j.path for j in plan.plan([name], p, 1, tmp_path)] for p in ("quick", "long")}
    assert at["quick"] == at["long"]  # one configuration: its own budget, nothing mixed in
    args = reproduce.parse_args(["--tables", name])
    assert "profile=quick" not in reproduce.multirun_command(name, args, 1, tmp_path)
    explicit = reproduce.parse_args(["--tables", "operator_families"])
    assert explicit.names == ["operator_families"] and explicit.aside == []  # named: trained


def test_the_remaining_time_counts_down_before_the_first_job_ends(tmp_path, monkeypatch):
    job = plan.Job("tnorms", ("seed=0",), tmp_path / "tnorms" / "x.json")
    progress = reproduce.Progress([job, job], seconds_per_job=600, n_jobs=1)
    clock = [progress.start]
    monkeypatch.setattr(reproduce.time, "time", lambda: clock[0])
    assert progress.line().endswith("~20m00s left")
    clock[0] += 600
    assert progress.line().endswith("~10m00s left")  # 10 min later, 10 min less
    clock[0] += 900
    assert progress.line().endswith("past the estimate")


def test_the_heartbeat_stops_once_every_job_ended(tmp_path, monkeypatch, capsys):
    jobs = [plan.Job("tnorms", (f"seed={i}",), tmp_path / f"{i}.json") for i in range(2)]
    progress = reproduce.Progress(jobs, seconds_per_job=600, n_jobs=1)
    clock = [progress.start]
    monkeypatch.setattr(reproduce.time, "time", lambda: clock[0])
    progress.report(every=60)
    clock[0] += 61
    progress.report(every=60)  # nothing ended for a minute: the line again
    assert capsys.readouterr().out.count("0/2 jobs ok") == 2
    for job in jobs:
        records.write_record(job.path, {k: None for k in records.RECORD_FIELDS} | {"status": "ok"})
    monkeypatch.setattr(plan.Job, "done", lambda job: True)
    progress.report(every=60)
    clock[0] += 61
    progress.report(every=60)  # the multirun still exiting a minute after its last record
    progress.report()
    assert capsys.readouterr().out.count("2/2 jobs ok") == 1


def test_a_record_landing_while_the_line_is_counted_prints_it_once(tmp_path, monkeypatch, capsys):
    jobs = [plan.Job("tnorms", (f"seed={i}",), tmp_path / f"{i}.json") for i in range(2)]
    progress = reproduce.Progress(jobs, seconds_per_job=600, n_jobs=1)
    record = {k: None for k in records.RECORD_FIELDS} | {"status": "ok"}
    records.write_record(jobs[0].path, record)

    def done(job: plan.Job) -> bool:  # the last job's record lands as its status is read
        if job is jobs[1] and not job.path.exists():
            records.write_record(job.path, record)
        return job.path.exists()

    monkeypatch.setattr(plan.Job, "done", done)
    for _ in range(3):
        progress.report(every=60)
    progress.report()
    assert capsys.readouterr().out.count("2/2 jobs ok") == 1


def test_a_stop_names_the_command_it_was_started_with(tmp_path, monkeypatch, capsys):
    def stopped(args):
        raise reproduce.Interrupted(signal.SIGTERM)

    monkeypatch.setattr(reproduce, "reproduce", stopped)
    monkeypatch.setenv(reproduce.RESUME_WITH, "make reproduce-tables PROFILE=smoke")
    args = ["--profile", "smoke", "--tables", "tnorms", "--records-dir", str(tmp_path)]
    assert reproduce.main([*args, "--no-render"]) == 143
    err = capsys.readouterr().err
    assert err.rstrip().endswith("make reproduce-tables PROFILE=smoke") and "--no-render" not in err
