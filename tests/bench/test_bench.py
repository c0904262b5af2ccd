"""The speed benchmark's harness (no timing assertions): the statistics it reports, and a tiny
run of `python -m campaign.bench`'s sections writing bench.json, README.md and scaling.png."""

from __future__ import annotations

import json
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from jobs import CPU_TRAINER, whole_config

from campaign.bench import bench_report, runs, steps, targets_report
from campaign.bench.__main__ import main
from campaign.bench.timing import interleaved, loglog_slope, summary_ms
from dfl_bench.lifecycle import records

CPU = torch.device("cpu")


@given(
    st.floats(0.1, 3.0),
    st.floats(1e-3, 1e3),
    st.lists(st.integers(1, 512), min_size=2, max_size=6, unique=True),
)
def test_loglog_slope_recovers_the_exponent_of_a_power_law(k, c, xs):
    assert loglog_slope(xs, [c * x**k for x in xs]) == pytest.approx(k, rel=1e-6, abs=1e-6)


def test_summary_ms_gives_median_and_quartiles_in_ms():
    stats = summary_ms([0.001, 0.002, 0.003, 0.004, 0.005])
    assert stats["median_ms"] == pytest.approx(3.0)
    assert (stats["q1_ms"], stats["q3_ms"]) == pytest.approx((2.0, 4.0))
    assert stats["iqr_ms"] == pytest.approx(2.0) and stats["n"] == 5


def test_interleaved_runs_slow_functions_every_kth_round():
    calls = {"fast": 0, "slow": 0}

    def bump(name):
        return lambda: calls.__setitem__(name, calls[name] + 1)

    fns = {name: bump(name) for name in calls}
    samples = interleaved(fns, repeats=10, warmup=4, device=CPU, every={"slow": 5})
    assert [len(samples["fast"]), len(samples["slow"])] == [10, 2]
    assert calls == {"fast": 14, "slow": 3}
    with pytest.raises(ValueError, match="repeats"):
        interleaved(fns, repeats=0, warmup=0, device=CPU)


def test_materialized_heads_give_the_factorized_logits():
    module = steps.build_module("both", steps.NEVER, CPU)
    e = torch.randn(2, 7, 50)
    fast = module.net.pair_logits(e)
    slow = steps.materialize(module).net.pair_logits(e)
    assert set(slow) == {"same", "sum9"}
    for name in fast:
        assert isinstance(module.net.heads[name], steps.BatchedMaterializedNTN)
        torch.testing.assert_close(slow[name], fast[name], rtol=1e-4, atol=1e-5)


def test_iteration_changes_the_weights():
    module = steps.build_module("sum9", 1, CPU)
    batch = {
        "labeled": (torch.randn(8, 1, 28, 28), torch.arange(8)),
        "unlabeled": (torch.randn(8, 1, 28, 28), torch.arange(8)),
    }
    before = [p.detach().clone() for p in module.parameters()]
    steps.iteration(module, [batch])()
    assert all(not torch.equal(a, b) for a, b in zip(before, module.parameters(), strict=True))


@pytest.mark.slow
def test_bench_sections_write_json_markdown_and_plot(tmp_path):
    argv = [
        "--out",
        str(tmp_path),
        "--sections",
        "nets",
        "iteration",
        "stack_timing",
        "scaling",
        "eval",
        "--stack-runs",
        "2",
        "--batch-size",
        "8",
        "--threads",
        "1",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--batch-sizes",
        "4",
        "8",
        "--subset-test",
        "256",
    ]
    main(argv)
    result = json.loads((tmp_path / "bench.json").read_text())
    assert {"machine", "nets", "iteration", "stack_timing", "scaling", "eval"} <= set(result)
    nets = {r["net"]: r for r in result["nets"]["rows"]}
    from dfl_bench.tasks.mnist.nets import choices

    assert set(nets) == set(choices()) and nets["paper"]["vs_paper"] == 1.0  # every conf/net
    assert nets["lenet"]["parameters"] == 44_426
    assert [r["runs"] for r in result["stack_timing"]["rows"]] == [2]
    assert {"cpu", "cores", "torch", "command", "load_average_start"} <= set(result["machine"])
    variants = {(r["kb"], r["variant"]) for r in result["iteration"]["rows"]}
    assert {
        ("supervised", "supervised"),
        ("same", "materialized"),
        ("sum9", "dfl_logging"),
    } <= variants
    for ratio in result["iteration"]["ratios"]:
        assert ratio["speedup_vs_materialized"] > 0 and math.isfinite(ratio["vs_ce_only"])
    assert {r["b"] for r in result["scaling"]["rows"]} == {4, 8}
    assert set(result["scaling"]["slopes"]) == {"iteration", "cnn", "logic"}
    assert result["eval"]["test_images"] == 256
    readme = (tmp_path / "README.md").read_text()
    assert "speedup vs materialized" in readme and "| CPU |" in readme
    assert "## Targets" in readme and "metrics on a logging step, same, 1 thread(s)" in readme
    assert "## Many runs per process" in readme and "## Digit networks" in readme
    assert "a training step of net=bn_wide / the paper network's" in readme
    assert (tmp_path / "scaling.png").read_bytes()[:4] == b"\x89PNG"


def test_paper_extrapolation_needs_two_increasing_slices(tmp_path):
    for slices in [(2, 2), (0, 5), (5, 80_000)]:
        with pytest.raises(ValueError, match="n1 < n2"):
            runs.paper_extrapolation("same", slices, tmp_path)
    assert not list(tmp_path.iterdir())


def test_time_kb_prints_one_row_per_knowledge_base_and_batch_size(capsys):
    main(["time-kb", "--kbs", "same", "sum9", "--batch-sizes", "4", "8", "--repeats", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("| kb | b | groundings |") and lines[2] == "|---|---|---|---|---|"
    assert [line.split(" | ")[:2] for line in lines[3:]] == [
        ["| same", "4"],
        ["| same", "8"],
        ["| sum9", "4"],
        ["| sum9", "8"],
    ]


def test_time_ntn_prints_both_heads_and_their_ratio(capsys):
    main(["time-ntn", "--repeats", "1", "--warmup", "0", "--subset-test", "100"])
    lines = capsys.readouterr().out.splitlines()
    assert "| head | iteration ms | cnn ms | ntn ms |" in lines
    rows = [line.split(" | ")[0] for line in lines if line.startswith(("| k=", "| ratio"))]
    assert rows == ["| k=50 (text)", "| k=10 + bias (code)", "| ratio k=50 / k=10"]


@pytest.mark.parametrize("bias", [False, True])
def test_materialize_keeps_the_heads_size_and_bias(bias):
    module = steps.build_module(
        "same", steps.NEVER, torch.device("cpu"), ["model.ntn_k=10", f"model.ntn_bias={bias}"]
    )
    e = torch.randn(2, 5, 50)
    expected = module.net.pair_logits(e)["same"]
    assert torch.allclose(steps.materialize(module).net.pair_logits(e)["same"], expected, atol=1e-5)


def test_bare_cnn_and_step_parts_train_what_they_name():
    data = steps.load_data(64, CPU, subset_test=64)
    batch = steps.draw_batches(data, 8, 1)[0]
    steps.bare_cnn(batch)()
    module = steps.build_module("sum9", steps.NEVER, CPU)
    before = [w.detach().clone() for w in module.net.parameters()]
    steps.bare_network(module, batch)()
    assert set(module.net.heads) == {"sum9"}
    assert all(not torch.equal(a, w) for a, w in zip(before, module.net.parameters(), strict=True))
    for kb, names in [
        ("same", ["cnn", "ntn", "pair_bce", "dfl_loss", "optimizer"]),
        ("ce_pair", ["cnn", "ntn", "pair_bce", "optimizer"]),
        ("ce_only", ["cnn", "optimizer"]),
    ]:
        module = steps.build_module(kb, steps.NEVER, CPU)
        fns = steps.parts(module, batch)
        assert list(fns) == names
        before = [w.detach().clone() for w in module.parameters()]
        for fn in fns.values():
            fn()
        assert all(w.grad is not None for w in module.net.digits.parameters())
        moved = [not torch.equal(a, w) for a, w in zip(before, module.parameters(), strict=True)]
        assert all(moved)  # the optimizer part updates every weight (the grads are accumulated)


def test_targets_table_marks_each_measured_value(tmp_path):
    result = {
        "floor": {
            "rows": [
                {"kb": "same", "vs_cnn": 1.4, "vs_network": 1.6},
                {"kb": "ce_pair", "vs_cnn": 1.2},
            ]
        },
        "paper_run": [
            {"name": "default", "torch_threads": 2, "wall_time_s": 1000.0, "steps": 70000}
        ],
    }
    rows = {r[0]: r for r in targets_report.target_rows(result)}
    assert rows["CLI iteration / bare CNN step, same (1 thread)"][1:] == ["1.4", "<= 1.5", "met"]
    assert rows["CLI iteration / bare CNN step, ce_pair (1 thread)"][3] == "**not met**"
    network = rows["CLI iteration / bare CNN + NTN heads step, same (1 thread)"]
    assert network[1:] == ["1.6", "<= 1.5", "**not met**"]
    assert not any("NTN heads step, ce_pair" in what for what in rows)
    assert rows["real paper-profile run, default (2 threads), minutes"][1:] == [
        "16.7",
        "<= 15",
        "**not met**",
    ]


def test_paper_run_records_are_read_with_relative_paths(tmp_path):
    record = {
        "status": "ok",
        "config": whole_config("profile=paper", trainer=CPU_TRAINER),
        "name": "default",
        "experiment": "default",
        "torch_threads": 2,
        "steps": 70000,
        "wall_time_s": 800.0,
        "test_accuracy": 0.96,
        "git_commit": "abc",
        "seed": 0,
    }
    record = {**{k: None for k in records.RECORD_FIELDS}, **record, "config_hash": "h"}
    (tmp_path / "default").mkdir()
    (tmp_path / "default" / "h.json").write_text(json.dumps(record))
    quick = whole_config("profile=quick", trainer=CPU_TRAINER)
    other = {**record, "config": quick, "config_hash": "q"}
    (tmp_path / "default" / "q.json").write_text(json.dumps(other))
    (found,) = runs.paper_run_records(tmp_path)
    assert found["wall_time_s"] == 800.0 and found["path"].endswith("h.json")
    assert found["eval_every"] == 1000


def test_the_gpu_session_covers_every_table_and_reports_its_targets():
    from campaign.bench import cuda_report, cuda_session
    from dfl_bench.results import cell_configs

    assert sorted(cuda_session.ORDER.split(",")) == sorted(cell_configs.experiments())
    runs = [{"seed": 0, "status": "ok", "test_accuracy": 0.9, "cons_ratio": 0.1, "cu_ant": 0.9}]
    variants = ("graph", "compiled", "eager", "alone")
    check = {k: {"exit": 0, "runs": runs, "stack_wall_s": 1.0} for k in variants}
    check |= {"steps": 200, "max_accuracy_gap_eager": 0.0, "max_accuracy_gap_alone": 0.002}
    check |= {"max_accuracy_gap_compiled": 0.001}
    assert cuda_session.graph_ok(check)
    assert not cuda_session.graph_ok({**check, "max_accuracy_gap_eager": 0.05})
    assert not cuda_session.graph_ok({"error": "RuntimeError: capture failed"})
    # compiled DFL terms go into the reproduction only if they agreed and made a table faster
    table = {"graph": {"stack_wall_s": 20.0}, "compiled": {"stack_wall_s": 15.0}}
    assert cuda_session.compile_ok({"graph_vs_eager": check, "table": table})
    slower = {**table, "compiled": {"stack_wall_s": 25.0}}
    assert not cuda_session.compile_ok({"graph_vs_eager": check, "table": slower})
    apart = {**check, "max_accuracy_gap_compiled": 0.05}
    assert not cuda_session.compile_ok({"graph_vs_eager": apart, "table": table})
    sixteen = {"runs": 16, "speedup": 16.0, "stack": {"median_ms": 2.0}}
    sixteen["separate"] = {"median_ms": 32.0}
    results = {
        "machine": {
            "device": "H100",
            "torch": "2",
            "cuda": "13",
            "cpu_count": 16,
            "git_commit": "a",
        },
        "graph_vs_eager": check,
        "single": {"graph": {"ms_per_iteration": 1.2, "wall_s": 1.2}},
        "stack_timing": {"table_compiled": {"rows": [sixteen]}},
        "table": table,
        "reproduce": {"ms_per_run_iteration": 0.5, "ok": 3, "trained_run_iterations": 30000},
    }
    text = cuda_report.report(results)
    rows16 = "16 stacked rows of same_symmetric / 16 separate runs (graph + compiled DFL)"
    assert f"| {rows16} | >= 15x | 16 | met |" in text
    assert "| 16 stacked seeds / 16 separate runs, throughput | >= 15x | n/a | n/a |" in text
    assert "| one run, ms per iteration (quick, CUDA graph) | <= 1.5 | 1.2 | met |" in text
    assert "| every table at long, per run-iteration (ms) | <= 0.4 | 0.5 | **not met** |" in text
    assert "| every table at long, minutes (from the rate) | <= 10 | 9.83 | met |" in text


def test_a_gpu_session_trains_the_seed_plan_first_and_skips_what_has_no_time_left(
    tmp_path, monkeypatch
):
    from campaign.bench import cuda_session

    ran = []
    monkeypatch.setattr(
        cuda_session,
        "until_budget",
        lambda session, args, command, name: ran.append((name, command)) or {"ok": 0},
    )
    out, records = tmp_path / "out", tmp_path / "records"
    argv = ["--out", str(out), "--device", "cpu", "--records", str(records)]
    argv += ["--scratch", str(tmp_path / "scratch"), "--skip", "graph_vs_eager", "stack_timing"]
    cuda_session.main([*argv, "single", "table"])
    assert [name for name, _ in ran] == ["seed_plan", "reproduce"]
    command = ran[0][1]
    assert command[1:4] == ["-m", "campaign.seed_plan", "run"]
    assert "cuda_graph=false" in command  # stage 1 did not show graphs agree: none
    assert {"--reverse", "--device", "cpu", "--parallel", "3"} <= set(command)
    assert (out / "records.tar.gz").is_file()
    ran.clear()
    cuda_session.main([*argv, "--budget", "30"])  # under the 40 s reserve: every stage skipped
    assert ran == [] and "== seed_plan: skipped" in (out / "session.log").read_text()


def test_op_count_counts_computing_operations_and_not_views():
    from campaign.bench import op_count

    def x() -> torch.Tensor:  # a fresh leaf: no gradient to accumulate into
        return torch.rand(4, 3, requires_grad=True)

    plain = op_count.count(lambda: (x() * 2).sum())
    assert plain >= 2  # mul and sum forward, their backward
    assert op_count.count(lambda: (x().view(-1).unsqueeze(0).t() * 2).sum()) == plain
    assert op_count.count(lambda: (x() * 2 * 3).sum()) > plain


def test_op_count_of_a_run_covers_its_dfl_term_within_its_loss():
    from campaign.bench import op_count, steps

    cpu = torch.device("cpu")
    x, y = torch.rand(128, 1, 28, 28), torch.arange(128) % 10
    batch = {"labeled": (x[:64], y[:64]), "unlabeled": (x[64:], y[64:])}
    counts = {}
    for row in ("product_S", "yager_p2_R"):
        module = steps.build_module(
            "same", steps.NEVER, cpu, ["+experiment=same_symmetric", f"row={row}"]
        )
        counts[row] = op_count.run_counts(module, batch)
        assert 0 < counts[row]["dfl_term"] < counts[row]["loss"]
    assert counts["product_S"]["dfl_term"] < counts["yager_p2_R"]["dfl_term"]


def test_step_vs_commit_reports_the_median_ratio_of_its_rounds(tmp_path):
    from campaign.bench import step_vs_commit

    result = {"base": "abc", "head": "def", "rounds": 3}
    result["same"] = {"base_ms": 10.0, "head_ms": 10.4, "ratio": 1.04, "ratios": [1.1, 1.04, 0.9]}
    path = step_vs_commit.write(result, tmp_path, "python -m campaign.bench step-vs-commit")
    text = path.read_text()
    assert "`def` against `abc`" in text
    assert "| same | 10.00 | 10.40 | 1.040 | 1.100, 1.040, 0.900 |" in text
    assert json.loads((tmp_path / "step_vs_commit.json").read_text())["same"]["ratio"] == 1.04


def test_a_stack_iteration_counts_at_least_one_runs_loss_per_run():
    """The whole stacked iteration (network, loss, backward, update) launches at least the
    loss's operations of one run, and a stack of two more than a stack of one."""
    from campaign.bench import op_count

    one, two = op_count.stack_counts((1, 2))
    batch = steps.draw_batches(steps.load_data(64, torch.device("cpu"), 500), 64, 1)[0]
    module = steps.build_module("same", steps.NEVER, torch.device("cpu"))
    assert one["operations"] > op_count.run_counts(module, batch)["loss"]
    assert two["runs"] == 2 and two["operations"] > one["operations"]


def test_the_floor_table_gives_each_knowledge_base_both_floors():
    ms = {"median_ms": 10.0, "iqr_ms": 1.0, "n": 4}
    section = {
        "cnn_step": ms,
        "network_step": {"same": {**ms, "median_ms": 16.0}},
        "rows": [
            {"kb": "same", "cli_ms_per_iteration": 22.0, "vs_cnn": 2.2, "vs_network": 1.375,
             "slices": [100, 1100]},
            {"kb": "ce_pair", "cli_ms_per_iteration": 11.0, "vs_cnn": 1.1, "slices": [100, 1100]},
        ],
        "parts": {"same": {"cnn": 10.0, "ntn": 5.0}},
    }  # fmt: skip
    text = "\n".join(bench_report._floor_md(section))
    assert "same 16.00 ms (IQR 1.00)" in text
    assert "| same | 22.00 |  | 2.20x (**no**) | 1.38x (yes) |" in text
    assert "| ce_pair | 11.00 |  | 1.10x (yes) | - |" in text


def test_step_vs_commit_times_a_revision_with_none_of_the_callers_secrets(tmp_path, monkeypatch):
    """The base revision's code runs with the path, thread settings and its folder on
    PYTHONPATH, never the caller's tokens."""
    import subprocess

    from campaign.bench import step_vs_commit

    seen = []

    def timed(command, **kwargs):
        seen.append(kwargs["env"])
        return subprocess.CompletedProcess(command, 0, "1.5\n", "")

    monkeypatch.setenv("SECRET", "hunter2")
    monkeypatch.setattr(step_vs_commit.subprocess, "run", timed)
    assert step_vs_commit.time_checkout(tmp_path, "sum9", 3, 1) == 1.5
    (env,) = seen
    assert "SECRET" not in env and "PATH" in env
    assert env["PYTHONPATH"] == str(tmp_path) and env["OMP_NUM_THREADS"] == "1"


@pytest.mark.parametrize(
    "argv, said",
    [
        (["time-families", "--rows", "godel"], "--rows: no such family row(s) ['godel']; valid: ["),
        (["time-families", "--batch-size", "0", "--warmup", "-1"], "--warmup=-1 (at least 0)"),
        (["time-addition", "--digits", "1", "0"], "--digits=0 (at least 1)"),
        (["time-addition", "--threads", "0", "--repeats", "-1"], "--threads=0 (at least 1)"),
    ],
)
def test_timing_tools_refuse_bad_input_first(argv, said, tmp_path, capsys, monkeypatch):
    """An unknown --rows or a count below its least is said in one line as `[tool] error:`
    (the valid rows named), exit 2, before anything is timed or written."""
    from campaign.bench import addition_timing, family_timing

    monkeypatch.setattr(family_timing, "time_sets", lambda *a: pytest.fail("timed"))
    monkeypatch.setattr(addition_timing, "step_seconds", lambda *a: pytest.fail("timed"))
    out = tmp_path / "page.md"
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"[{argv[0]}] error: ") and said in err, err
    if "--rows" in argv:
        assert "'dombi_p2'" in err, err
    assert not out.exists()
