"""Many runs per process: a run trained in a stack is the same run trained alone (on a CPU bit
for bit: its batches, dropout masks, negative pairs, logged losses, weights and record; in the
GPU layout equal up to the rounding of grouped kernels), `hydra/launcher=stack` writes the
records and W&B runs that separate jobs write, a run whose loss turns NaN fails alone while the
others finish, and an interrupted stack resumes to the uninterrupted records."""

from __future__ import annotations

import json
import math
import os
import subprocess
from collections import defaultdict
from pathlib import Path

import lightning as L
import pytest
import torch
import warm_cli
from jobs import built_data, composed, rows_experiment
from lightning.pytorch.loggers import Logger
from wandb_offline import history as wandb_history
from wandb_offline import summary as wandb_summary

from dfl_bench.lifecycle import job as lifecycle
from dfl_bench.lifecycle import loggers, records, stack_sweep, train
from dfl_bench.lifecycle.trainer import build_trainer
from dfl_bench.tasks.contract import nonfinite_state_reason
from dfl_bench.tasks.mnist import dfl_run, mnist_data, nets, ntn
from dfl_bench.tasks.mnist.stack_data import StackDataModule
from dfl_bench.tasks.mnist.stack_net import StackNet
from dfl_bench.training import RunsModule

REPO = Path(__file__).resolve().parents[2]
# 640 training images: 634 unlabeled = 9 batches per pass, so 12 steps cross a pass boundary
# log_every=3: steps with and without metrics
SHORT = (
    "profile.max_steps=12",
    "profile.subset_train=640",
    "profile.log_every=3",
)
ROWS = ("product_S", "godel_R", "lukasiewicz")  # three operator families of one table
# grouped and batched kernels (the GPU layout) round differently from the single-run ones
CLOSE = {"rel": 1e-4, "abs": 1e-5}
EXACT = {"rel": 0.0, "abs": 0.0}
# the GPU layout over 12 steps of sharp operators (Lukasiewicz): weights within 6.2e-5 measured
LAYOUT = {"rel": 1e-4, "abs": 1e-4}
METRICS = ("test_accuracy", "best_test_accuracy", "cons_ratio", "cu_cons", "cu_ant")
SEEDS = [("seed=0",), ("seed=1",), ("seed=2",)]
TABLE_ROWS = [
    ("+experiment=same_symmetric", f"row={row}", f"seed={3 + i}") for i, row in enumerate(ROWS)
]


def assert_close_or_none(got, want, close: dict, key: str) -> None:
    """Equal up to `close`, NaN as NaN; an undefined ratio (None) only where the other is None
    (pytest.approx refuses None with a relative tolerance since pytest 9)."""
    if want is None or got is None:
        assert got is want, key
    else:
        assert got == pytest.approx(want, nan_ok=True, **close), key


class Recorder(Logger):
    """A Lightning logger that keeps every `log_metrics` call."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[int, dict]] = []

    @property
    def name(self) -> str:
        return "recorder"

    @property
    def version(self) -> str:
        return "0"

    def log_metrics(self, metrics, step=None) -> None:
        self.rows.append((step, dict(metrics)))

    def log_hyperparams(self, params, *args, **kwargs) -> None:
        pass


@pytest.fixture
def draws(monkeypatch):
    """Every batch and dropout mask drawn, keyed by the seed of the generator that drew it."""
    seen = defaultdict(list)
    indices, masks = mnist_data.TrainStream.indices, nets.dropout_masks

    def batches(self):
        for li, ui in indices(self):
            seen["batch", self._generator.initial_seed()].append(self.y[li].tolist())
            yield li, ui

    def drawn(n, device="cpu", generator=None):
        out = masks(n, device, generator)
        seen["mask", generator.initial_seed()].append(out[1].sum().item())
        return out

    monkeypatch.setattr(mnist_data.TrainStream, "indices", batches)
    monkeypatch.setattr(dfl_run, "dropout_masks", drawn)  # a stack's grouped layout draws here
    monkeypatch.setattr(nets, "dropout_masks", drawn)  # a run's own network draws here
    return seen


def alone(tmp: Path, *overrides: str) -> tuple[RunsModule, Recorder]:
    """One run trained as a job trains it on a CPU (a RunsModule of one; no records), with a
    recording logger."""
    single, (logger,) = train_stack(tmp, overrides)
    return single, logger


ALONE: dict[tuple[str, ...], tuple[RunsModule, Recorder, dict]] = {}


def alone_once(tmp: Path, overrides: tuple[str, ...], draws) -> tuple[RunsModule, Recorder, dict]:
    """`alone(tmp, *overrides)` and the batches and masks it drew, trained once per test process:
    every path of the stack is compared with the same runs alone."""
    if overrides not in ALONE:
        draws.clear()
        ALONE[overrides] = (*alone(tmp, *overrides), dict(draws))
    return ALONE[overrides]


def train_stack(
    tmp: Path, *runs: tuple[str, ...], layout: bool = False, **gpu_path: bool
) -> tuple[RunsModule, list[Recorder]]:
    """The runs (each a tuple of overrides) trained as one stack, each with a recording logger;
    `layout`: the GPU's StackNet layout (on this CPU); `gpu_path`: RunsModule's
    `cuda_graph` (the graph's path, here without the capture) and `compile_dfl`."""
    cfgs = [composed(tmp, *SHORT, *overrides)[0] for overrides in runs]
    built = [train.prepared(cfg, overrides) for cfg, overrides in zip(cfgs, runs, strict=True)]
    recorders = [Recorder() for _ in runs]
    poison = [cfg.debug.nan_at_step for cfg in cfgs]
    stack = RunsModule([b.module for b in built], recorders, poison, grouped=layout, **gpu_path)
    seeds = [cfg.seed for cfg in cfgs]
    trainer = build_trainer(cfgs[0], [])
    trainer.fit(stack, datamodule=StackDataModule(built[0].config["data"], seeds, seeds))
    return stack, recorders


def assert_same_run(
    stack: RunsModule, r: int, recorder: Recorder, single: RunsModule, logger, close: dict
) -> None:
    """Run r of the stack logged and learned what the run alone did (up to `close`)."""
    run = single.members[0]
    assert [s for s, _ in recorder.rows] == [s for s, _ in logger.rows]
    for (_, got), (_, want) in zip(recorder.rows, logger.rows, strict=True):
        assert set(got) == set(want)
        for key, value in want.items():
            assert_close_or_none(got[key], value, close, key)
    weights = (
        stack.grouped_net.copy_to(r, ntn.DFLNet(run.predicates))
        if stack.grouped
        else stack.run_nets[r]
    )
    for (name, got), want in zip(weights.named_parameters(), run.net.parameters(), strict=True):
        torch.testing.assert_close(got, want, rtol=close["rel"], atol=close["abs"], msg=name)
    summary, want = stack.summary(r), single.summary(0)
    assert summary["steps"] == want["steps"] == 12
    for key in METRICS:
        assert_close_or_none(summary[key], want[key], close, key)


GPU_PATHS = {  # RunsModule's options on the GPU's path, run here without the capture
    "own": {},
    "layout": {"layout": True},
    "graph": {"layout": True, "cuda_graph": True},
    "compiled": {"layout": True, "cuda_graph": True, "compile_dfl": True},
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("runs", "path", "close"),
    [
        (SEEDS, "own", EXACT),
        (TABLE_ROWS, "own", EXACT),
        (SEEDS, "layout", CLOSE),
        (TABLE_ROWS, "layout", LAYOUT),
        (TABLE_ROWS, "graph", LAYOUT),
        (TABLE_ROWS, "compiled", LAYOUT),
    ],
    ids=[
        "seeds",
        "table-rows",
        "seeds-gpu-layout",
        "table-rows-gpu-layout",
        "table-rows-gpu-graph-path",
        "table-rows-gpu-graph-path-compiled",
    ],
)
def test_a_run_in_a_stack_is_the_run_alone(tmp_path, draws, runs, path, close):
    stack, recorders = train_stack(tmp_path / "stack", *runs, **GPU_PATHS[path])
    compiled = GPU_PATHS[path].get("compile_dfl", False)
    assert all((m._dfl_term is not dfl_run.dfl_term) == compiled for m in stack.members)
    assert (stack._graph is not None) == GPU_PATHS[path].get("cuda_graph", False)
    stack_draws, alone_draws = dict(draws), {}
    for r, overrides in enumerate(runs):
        run, logger, drawn = alone_once(tmp_path / str(r), overrides, draws)
        assert_same_run(stack, r, recorders[r], run, logger, close)
        alone_draws |= drawn
    assert alone_draws.keys() == stack_draws.keys()
    for key, seen in alone_draws.items():
        assert stack_draws[key] == seen, key  # the same batches and masks, bit for bit


@pytest.mark.slow
def test_a_runs_order_and_mates_in_a_stack_do_not_change_it(tmp_path):
    first, _ = train_stack(tmp_path / "a", *SEEDS)
    reordered, _ = train_stack(tmp_path / "b", *SEEDS[::-1], ("seed=7",))
    for r in range(3):
        assert reordered.summary(2 - r) == first.summary(r)
        for got, want in zip(
            reordered.run_nets[2 - r].parameters(), first.run_nets[r].parameters(), strict=True
        ):
            assert torch.equal(got, want)


def test_the_gpu_layout_computes_what_each_run_computes():
    """Grouped convolutions and vmapped heads compute each DFLNet's forward and pair logits."""
    torch.manual_seed(0)
    runs = [ntn.DFLNet(("same",)) for _ in range(3)]
    stack = StackNet(runs)
    x = torch.randn(3, 8, 1, 28, 28)
    masks = nets.dropout_masks(24)
    masks = (masks[0].view(3, 8, -1, 1, 1), masks[1].view(3, 8, -1))
    logits, emb = stack(x, masks)
    for r, net in enumerate(runs):
        want_logits, want_emb = net.digits(x[r], masks=(masks[0][r], masks[1][r]))
        torch.testing.assert_close(logits[r], want_logits)
        torch.testing.assert_close(emb[r], want_emb)
        torch.testing.assert_close(
            stack.pair_logits(emb)["same"][r], net.pair_logits(emb[r])["same"]
        )


def sweep_jobs(tmp: Path, *runs: tuple[str, ...]) -> list[lifecycle.Job]:
    """Jobs as the stacked launcher hands them to `run_sweep`."""
    return [lifecycle.Job(*composed(tmp, *SHORT, *overrides)) for overrides in runs]


def test_a_stack_of_one_trains_on_the_data_module_its_check_built(tmp_path, monkeypatch):
    built = built_data(monkeypatch)
    jobs = sweep_jobs(tmp_path, ("seed=0",), ("seed=1",))
    stack_sweep.run_sweep(jobs, stack_size=1)
    assert [job.record["status"] for job in jobs] == ["ok", "ok"]
    assert [d.seeds for d in built] == [[0], [1]]  # one each, none for training
    assert [job.data for job in jobs] == [None, None]  # no job keeps its loaded data


@pytest.mark.slow
def test_a_run_that_turns_nan_fails_alone_and_the_others_finish(tmp_path):
    runs = [("seed=0",), ("seed=1", "debug.nan_at_step=5"), ("seed=2",)]
    jobs = sweep_jobs(tmp_path, *runs)
    stack_sweep.run_sweep(jobs, stack_size=16)
    poisoned = train.run(*composed(tmp_path / "alone", *SHORT, *runs[1]))
    got = jobs[1].record
    assert got["status"] == poisoned["status"] == "failed"
    assert (
        got["reason"]
        == poisoned["reason"]
        == "non-finite loss: loss term 'dfl' is not finite at step 6"
    )
    assert got["steps"] == poisoned["steps"] and got["evaluated_step"] == poisoned["evaluated_step"]
    assert got["test_accuracy"] == poisoned["test_accuracy"]
    assert "failed" in jobs[1].error
    for job, overrides in ((jobs[0], runs[0]), (jobs[2], runs[2])):
        assert job.error is None and job.record["status"] == "ok" and job.record["steps"] == 12
        healthy = train.run(*composed(tmp_path / "alone", *SHORT, *overrides))
        for key in METRICS:  # the NaN run's weights and loss reach no other run
            assert job.record[key] == healthy[key], key


@pytest.mark.slow
@pytest.mark.parametrize("path", ["own", "layout"])
def test_poisoning_one_run_of_four_fails_it_alone_and_leaves_the_others_bit_identical(
    tmp_path, path
):
    """NaN weights in run 2 (not the first) of a stack of 4: that run fails, and the other three
    learn exactly what they learn in the unpoisoned stack, on the CPU's own networks and on the
    layout the GPU uses."""
    runs = [("seed=0",), ("seed=1",), ("seed=2",), ("seed=3",)]
    poisoned = [*runs[:2], ("seed=2", "debug.nan_at_step=5"), runs[3]]
    clean, _ = train_stack(tmp_path / "clean", *runs, **GPU_PATHS[path])
    bad, _ = train_stack(tmp_path / "bad", *poisoned, **GPU_PATHS[path])
    assert bad.failure(2) == "non-finite loss: loss term 'dfl' is not finite at step 6"
    assert [bad.failure(r) for r in (0, 1, 3)] == [None, None, None]
    for r in (0, 1, 3):
        got, want = bad.summary(r), clean.summary(r)
        assert {k: got[k] for k in METRICS} == {k: want[k] for k in METRICS}, r
        nets = (
            (
                bad.grouped_net.copy_to(r, ntn.DFLNet(("same",))),
                clean.grouped_net.copy_to(r, ntn.DFLNet(("same",))),
            )
            if bad.grouped
            else (bad.run_nets[r], clean.run_nets[r])
        )
        for (name, a), b in zip(nets[0].named_parameters(), nets[1].parameters(), strict=True):
            assert torch.equal(a, b), (r, name)


@pytest.mark.slow
@pytest.mark.parametrize("path", ["own", "layout", "graph"])
def test_a_run_whose_adam_state_overflows_fails_alone_on_every_path(tmp_path, path):
    """Run 1's squared DFL gradient is inf in exp_avg_sq; run 0 trains on."""
    runs = [("seed=0",), ("seed=1", "kb.w_dfl=1e38")]
    stack, _ = train_stack(tmp_path, *runs, **GPU_PATHS[path])
    assert stack.failure(1) == nonfinite_state_reason(2, "exp_avg_sq")  # checked at step 3
    assert stack.failure(0) is None and stack.summary(0)["steps"] == 12


@pytest.mark.slow
def test_on_the_graph_path_a_nan_run_fails_where_the_eager_stack_fails_it(tmp_path):
    runs = [("seed=0",), ("seed=1", "debug.nan_at_step=5"), ("seed=2",)]
    graph, _ = train_stack(tmp_path / "graph", *runs, **GPU_PATHS["graph"])
    eager, _ = train_stack(tmp_path / "eager", *runs, **GPU_PATHS["layout"])
    assert graph._graph is not None
    assert graph.failures == eager.failures
    assert eager.failure(1) == "non-finite loss: loss term 'dfl' is not finite at step 6"
    for r in range(3):
        got, want = graph.summary(r), eager.summary(r)
        assert got["steps"] == want["steps"] and got["evaluated_step"] == want["evaluated_step"]
        for key in METRICS:
            assert_close_or_none(got[key], want[key], LAYOUT, key)


def crash_at_step_10(monkeypatch) -> None:
    """Make the next stacks in this process die after step 10 (smoke checkpoints every 2 steps)."""

    class Crash(L.Callback):
        def on_train_batch_end(self, trainer, *args):
            if trainer.global_step == 10:
                raise RuntimeError("killed")

    build = lifecycle.build_trainer
    monkeypatch.setattr(
        lifecycle, "build_trainer", lambda cfg, hooks: build(cfg, [*hooks, Crash()])
    )


@pytest.mark.slow
def test_an_interrupted_stack_resumes_to_the_uninterrupted_records(tmp_path, monkeypatch):
    runs = [("seed=0",), ("seed=1",)]
    whole = sweep_jobs(tmp_path / "whole", *runs)
    stack_sweep.run_sweep(whole, stack_size=2)

    crash_at_step_10(monkeypatch)
    crashed = sweep_jobs(tmp_path, *runs)
    stack_sweep.run_sweep(crashed, stack_size=2)
    assert all("RuntimeError: killed" in job.error for job in crashed)
    assert list((tmp_path / "checkpoints" / "_stacks").glob("*/last.ckpt"))
    monkeypatch.undo()
    resumed = sweep_jobs(tmp_path, *runs)
    stack_sweep.run_sweep(resumed, stack_size=2)
    for job, ref in zip(resumed, whole, strict=True):
        assert job.record["resumed"] and job.record["status"] == "ok"
        fields = records.SUMMARY_FIELDS
        assert {k: job.record[k] for k in fields} == {k: ref.record[k] for k in fields}
    assert not list((tmp_path / "checkpoints" / "_stacks").glob("*/last.ckpt"))


@pytest.mark.slow
def test_force_restarts_an_interrupted_stack_instead_of_resuming_it(tmp_path, monkeypatch):
    runs = [("seed=0",), ("seed=1",)]

    crash_at_step_10(monkeypatch)
    stack_sweep.run_sweep(sweep_jobs(tmp_path, *runs), stack_size=2)
    assert list((tmp_path / "checkpoints" / "_stacks").glob("*/last.ckpt"))
    monkeypatch.undo()
    forced = sweep_jobs(tmp_path, *[(*r, "force=true") for r in runs])
    stack_sweep.run_sweep(forced, stack_size=2)
    assert [(j.record["status"], j.record["resumed"]) for j in forced] == [("ok", False)] * 2


@pytest.mark.slow
def test_a_stack_killed_between_its_records_resumes_the_rest(tmp_path, monkeypatch):
    runs = [("seed=0",), ("seed=1",)]
    whole = sweep_jobs(tmp_path / "whole", *runs)
    stack_sweep.run_sweep(whole, stack_size=2)
    write, written = records.write_record, []

    def killed_after_one(path, record):
        if written:
            raise RuntimeError("killed")
        written.append(path)
        write(path, record)

    monkeypatch.setattr(records, "write_record", killed_after_one)
    stack_sweep.run_sweep(sweep_jobs(tmp_path, *runs), stack_size=2)
    monkeypatch.undo()
    assert len(list((tmp_path / "records").rglob("*.json"))) == 1
    resumed = sweep_jobs(tmp_path, *runs)
    stack_sweep.run_sweep(resumed, stack_size=1)  # the stack is re-formed from its checkpoint
    assert resumed[1].record["resumed"] and resumed[1].record["status"] == "ok"
    fields = records.SUMMARY_FIELDS
    for job, ref in zip(resumed, whole, strict=True):
        assert {k: job.record[k] for k in fields} == {k: ref.record[k] for k in fields}
    assert json.loads(written[0].read_text()) == records.read_record(written[0])  # not rewritten
    assert not list((tmp_path / "checkpoints" / "_stacks").iterdir())


@pytest.mark.slow
def test_sigterm_checkpoints_the_stack_and_the_rerun_resumes_it(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled"}
    command = [
        *("-m", "hydra/launcher=stack", "profile=smoke"),
        *("logger=none", "progress_bar=false", f"hydra.sweep.dir={tmp_path / 'sweep'}"),
        *(f"records_dir={tmp_path / 'records'}", f"checkpoint_dir={tmp_path / 'checkpoints'}"),
        *("seed=0,1", "+debug.sigterm_at_step=3,99"),  # the 99 stack is the uninterrupted twin
    ]

    def cli() -> subprocess.CompletedProcess:
        return warm_cli.run(command, tmp_path, env, timeout=600)

    first = cli()
    assert first.returncode == 143, first.stderr[-3000:]
    assert "SIGTERM at step 3" in first.stderr
    assert len(list((tmp_path / "checkpoints" / "_stacks").glob("*/last.ckpt"))) == 1
    second = cli()
    assert second.returncode == 0, second.stderr[-3000:]
    done = [json.loads(p.read_text()) for p in (tmp_path / "records").rglob("*.json")]
    by = {(r["seed"], r["config"]["debug"]["sigterm_at_step"]): r for r in done}
    assert len(by) == 4
    for seed in (0, 1):
        resumed, whole = by[seed, 3], by[seed, 99]
        assert resumed["resumed"] and not whole["resumed"]
        fields = records.SUMMARY_FIELDS
        assert {k: resumed[k] for k in fields} == {k: whole[k] for k in fields}


def test_stack_keys_group_what_one_model_can_share():
    def key(*overrides):
        cfg, _ = composed(Path("/tmp"), *overrides)
        return stack_sweep.stack_key(train.resolved_config(cfg))

    assert key("seed=0") == key("seed=1") == key("tnorm=product", "seed=4")
    assert key("seed=0") != key("optimizer=sgd")
    assert key("seed=0") != key("kb=sum9")
    assert key("seed=0") != key("kb=ce_pair")  # no DFL term: no unlabeled forward
    assert key("seed=0") != key("+debug.sigterm_at_step=3")


@pytest.mark.slow
def test_the_stack_launcher_writes_what_separate_jobs_write(tmp_path):
    search = rows_experiment(tmp_path, "stack_test")
    env = {**os.environ, "WANDB_MODE": "offline", "PYTHONPATH": str(REPO), "WANDB_SILENT": "true"}
    command = [
        *("-m", "profile=smoke", "progress_bar=false"),
        *(f"records_dir={tmp_path / 'records'}", f"checkpoint_dir={tmp_path / 'checkpoints'}"),
        *(search, "+experiment=stack_test", "seed=0,1", "hydra/launcher=stack"),
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    done = warm_cli.run(command, tmp_path, env, timeout=600)
    assert done.returncode == 1, done.stderr[-3000:]  # the poisoned runs failed, as separate jobs
    assert "row=poisoned" in done.stderr and "failed: non-finite loss" in done.stderr
    got = {
        p.relative_to(tmp_path / "records"): json.loads(p.read_text())
        for p in (tmp_path / "records").rglob("*.json")
    }
    assert len(got) == 6
    for row in ("product", "godel", "poisoned"):
        for seed in (0, 1):
            overrides = (search, "+experiment=stack_test", f"row={row}", f"seed={seed}")
            separate = train.run(*composed(tmp_path / "separate", "profile=smoke", *overrides))
            want = records.strict(separate)  # as written: NaN is null
            path = Path("stack_test") / f"{want['config_hash']}.json"
            record = got[path]
            assert set(record) == set(want)
            assert records.hashed_config(record["config"]) == records.hashed_config(want["config"])
            for key in ("status", "reason", "row", "seed", "profile", "steps", "data_checksum"):
                assert record[key] == want[key], key
            for key in (*METRICS, "cons_magnitude", "ant_magnitude", "pair_accuracy"):
                assert record[key] == want[key], key  # on a CPU: the run alone, bit for bit
            check_wandb_run(tmp_path / record["log_dir"], record)
    again = warm_cli.run(command, tmp_path, env, timeout=600)
    assert again.returncode == 1, again.stderr[-3000:]  # the ok runs are skipped, not retrained
    assert again.stdout.count("skipping") == 4 and again.stdout.count("] failed") == 2


def check_wandb_run(run_dir: Path, record: dict) -> None:
    """The run's own offline W&B run, with its metrics, test accuracy and the record's summary."""
    assert run_dir.name.startswith("offline-run-")
    summary = wandb_summary(run_dir, wait_for=loggers.SUMMARY_KEYS)
    for key in loggers.SUMMARY_KEYS:
        value = record[key]
        if isinstance(value, float):
            value = pytest.approx(value) if math.isfinite(value) else None
        assert summary[key] == value, key
    if record["status"] == "ok":
        history = wandb_history(run_dir)
        accuracy = [h["test/accuracy"] for h in history if "test/accuracy" in h]
        assert accuracy[-1] == pytest.approx(record["test_accuracy"])
        assert any("loss/total" in h and "metrics/cons_ratio" in h for h in history)


@pytest.mark.slow
def test_stack_throughput_reports_both_timings_per_stack_size():
    from campaign.bench.stack_timing import stack_throughput

    result = stack_throughput(runs=(1, 2), repeats=1, warmup=0, n_batches=1)
    assert result["device"] == "cpu" and [row["runs"] for row in result["rows"]] == [1, 2]
    for row in result["rows"]:
        assert row["stack"]["median_ms"] > 0 and row["separate"]["median_ms"] > 0
        assert row["speedup"] == pytest.approx(
            row["separate"]["median_ms"] / row["stack"]["median_ms"]
        )


def test_a_table_stack_in_the_bench_trains_each_row_of_the_table():
    from campaign.bench.stack_timing import table_rows

    kb, rows = table_rows("sum9_symmetric")
    assert kb == "sum9" and len(rows) == 7
    assert rows[0] == ("+experiment=sum9_symmetric", "row=godel")


@pytest.mark.slow
def test_two_jobs_of_one_config_hash_train_once_and_the_second_is_skipped(tmp_path, capsys):
    jobs = sweep_jobs(tmp_path, ("kb.w_dfl=10",), ("kb.w_dfl=10.0",), ("seed=1",))
    stack_sweep.run_sweep(jobs, stack_size=16)
    assert [job.error for job in jobs] == [None, None, None]
    assert jobs[1].record == records.read_record(jobs[0].paths[0])
    out = capsys.readouterr().out
    assert f"skipping {jobs[1].name}: " in out and out.count("[dfl_bench] ") == 3


@pytest.mark.parametrize(("size", "shown"), [(0, "0"), (1.7, "1.7"), (True, "True")])
def test_a_stack_size_that_is_no_whole_number_from_one_is_invalid_input(size, shown, capsys):
    from hydra_plugins.dfl_bench_stack.stack_launcher import StackLauncher

    with pytest.raises(SystemExit) as exit_info:
        StackLauncher(stack_size=size)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (
        "[dfl_bench] invalid configuration: hydra.launcher.stack_size must be an integer >= 1, "
        f"got {shown}\n"
    )


@pytest.mark.slow
def test_the_command_line_refuses_a_stack_size_before_any_job(tmp_path):
    command = [
        *("-m", "seed=0", "hydra/launcher=stack"),
        *("hydra.launcher.stack_size=1.7", f"records_dir={tmp_path}"),
        f"hydra.sweep.dir={tmp_path}",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled"}
    done = warm_cli.run(command, tmp_path, env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "[dfl_bench] invalid configuration: hydra.launcher.stack_size must be an integer >= 1, "
        "got 1.7"
    )
    assert not list(tmp_path.rglob("*.json"))


def test_every_job_trains_as_one_runs_module_grouped_only_on_a_gpu(tmp_path):
    cpu = lifecycle.Job(*composed(tmp_path, "profile=smoke"))
    gpu = lifecycle.Job(*composed(tmp_path, "profile=smoke", "trainer=gpu"))
    addition = lifecycle.Job(*composed(tmp_path, "profile=smoke", "task=mnist_addition"))
    addition_gpu = lifecycle.Job(*composed(tmp_path, "profile=smoke", "task=mnist_addition"))
    addition_gpu.cfg.trainer.accelerator = "gpu"
    for job, like in ((cpu, cpu), (gpu, cpu), (addition, addition), (addition_gpu, addition)):
        job.config, job.module, job.data = train.prepared(like.cfg, [])  # the GPU job as built here
    assert not lifecycle._built([cpu], [None])[1].grouped
    assert lifecycle._built([gpu], [None])[1].grouped  # one run: the StackNet layout and graphs
    assert not lifecycle._built([addition_gpu], [None])[1].grouped  # no grouped layout: its own
    data, module = lifecycle._built([addition, addition], [None, None])
    assert len(module.members) == 2 and data.seeds == [0, 0]


@pytest.mark.parametrize(("log_every", "captured"), [(1, False), (2, True)])
def test_the_graph_is_captured_only_after_an_eager_step_without_metrics(log_every, captured):
    """The capture needs the kernels warmed and the DFL terms compiled by an eager step that
    computed no metrics; when every step logs, the stack stays eager."""
    from campaign.bench.stack_timing import stack_batch
    from campaign.bench.steps import build_module, draw_batches, load_data

    cpu = torch.device("cpu")
    runs = [build_module("same", log_every, cpu, [f"seed={seed}"]) for seed in (0, 1)]
    batches = draw_batches(load_data(64, cpu, subset_test=500), 64, 4)
    stack = RunsModule(runs, [None, None], grouped=True, cuda_graph=True)
    optimizer = stack.configure_optimizers()
    for step, batch in enumerate(batches, start=1):
        stack.iterate(optimizer, stack_batch([batch, batch]), step)
    assert (stack._graph is not None) == captured
