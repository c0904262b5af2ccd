"""The results module on synthetic records: loading, cells over seeds, marks, agreement,
rendering, a report's hooks and the CLI (exact small cases; no training)."""

from __future__ import annotations

import copy
import json
import math
import re
import warnings
import zlib
from dataclasses import replace
from pathlib import Path

import pytest

from dfl_bench import outputs
from dfl_bench.lifecycle.records import config_hash
from dfl_bench.results import publish, render_beyond, render_paper
from dfl_bench.results.__main__ import main
from dfl_bench.results.agreement import agreement, spearman
from dfl_bench.results.cell_configs import DEFAULT, cell_config
from dfl_bench.results.cells import build_table, collapse_threshold
from dfl_bench.results.load import RecordWarning, load_records
from dfl_bench.results.paper import cell_key, load_paper
from dfl_bench.results.publish import build
from dfl_bench.results.report import Report

REPO = Path(__file__).resolve().parents[2]
PAPER = load_paper()


def write(
    root: Path,
    experiment: str,
    name: str,
    *,
    row=None,
    seed=0,
    profile="quick",
    status="ok",
    accuracy=0.95,
    best=None,
    cons=0.1,
    cu_cons=0.5,
    cu_ant=0.9,
    commit="abc",
    extra_config=None,
    text=None,
) -> Path:
    """A run record as train.py writes it (only the fields the results module reads) at its own
    place `<experiment>/<config-hash>.json` (`name` names only a file of raw `text`); `best`
    (the best evaluation's accuracy) defaults to the final `accuracy`."""
    config = _config(experiment, row, seed, profile, extra_config or {})
    record = {
        "status": status,
        "reason": None if status == "ok" else "non-finite loss: step 3",
        "config": config,
        "seed": seed,
        "profile": profile,
        "git_commit": commit,
        "data_checksum": "abc",
        "steps": (config.get("profile") or {}).get("max_steps", 1000),
        "wall_time_s": 60.0,
        "test_accuracy": accuracy if status == "ok" else None,
        "best_test_accuracy": accuracy if best is None else best,
        "cons_ratio": cons,
        "cu_cons": cu_cons,
        "cu_ant": cu_ant,
        "cons_magnitude": None,
        "ant_magnitude": None,
        "experiment": experiment,
        "finished": "2026-01-01T00:00:00+00:00",
    }
    path = root / experiment / f"{name if text is not None else config_hash(config)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else json.dumps(record))
    return path


def _config(experiment: str, row, seed: int, profile: str, extra: dict) -> dict:
    """The config its jobs train today for a cell of a paper table (so it is the cell's own),
    else a small stand-in; with `seed` and `extra` merged in."""
    table = PAPER.tables.get(experiment)
    config = cell_config(DEFAULT, profile, None, "") if experiment == DEFAULT else None
    if table is not None:
        value = row if table.key in (None, "row") else _dig(extra, table.key)
        if value is not None or table.key is None:
            config = cell_config(experiment, profile, table.key, cell_key(value))
    config = copy.deepcopy(config) or {
        "experiment_name": experiment,
        "row": row,
        "profile": {"name": profile},
        "kb": {"name": "same", "w_dfl": 10.0, "formulas": None},
        "optimizer": {"name": "adam", "lr": 0.001},
        "tnorm": {"name": "yager", "p": 1.5},
        "implication": {"name": "sigmoidal", "s": 9.0, "b0": -0.5},
        # rows differ, as real ones: by a setting a job takes (NTN slices, one per row name)
        "model": {"ntn_k": 1 + zlib.crc32(str(row).encode()) % 1024, "ntn_bias": True},
    }
    config["seed"] = seed
    return _merged(config, extra)


def _dig(config: dict, dotted: str):
    for key in dotted.split("."):
        config = config.get(key) if isinstance(config, dict) else None
    return config


def _merged(base: dict, extra: dict) -> dict:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict) and key != "provenance":
            _merged(base[key], value)
        else:
            base[key] = value
    return base


def tnorms_table(root: Path, profile: str = "quick"):
    return build_table(PAPER.tables["tnorms"], load_records(root), profile, REPO)


def test_mean_std_n_over_seeds_final_first_best_beside(tmp_path):
    for seed, (acc, best) in enumerate(((0.90, 0.93), (0.92, 0.94), (0.94, 0.95))):
        write(tmp_path, "tnorms", f"g{seed}", row="godel", seed=seed, accuracy=acc, best=best)
    ours = tnorms_table(tmp_path).ours()["godel"]
    assert (ours.n_ok, ours.n["accuracy"]) == (3, 3)
    assert ours.mean["accuracy"] == pytest.approx(92.0)  # the final accuracy: the primary number
    assert ours.std["accuracy"] == pytest.approx(2.0)  # sample std of 90, 92, 94
    assert ours.best == pytest.approx((94.0, 1.0))  # selected on the test set: beside it
    assert render_paper.ours_value(ours, "accuracy") == "92.00 ± 2.00 (best 94.00 ± 1.00)"
    # Δ against the paper's 20.4 uses our final accuracy
    assert (
        render_paper.difference(PAPER.tables["tnorms"].rows[0][1][0], ours, "accuracy") == "+71.60"
    )


def test_a_run_collapsed_below_the_baseline_by_more_than_five_points_is_counted(tmp_path):
    for seed in range(3):
        write(tmp_path, "baseline", f"b{seed}", row="ce_pair", seed=seed, accuracy=0.95)
    for seed, acc in enumerate((0.97, 0.20, 0.901)):  # 90.1 is within 5 points of 95
        write(tmp_path, "tnorms", f"g{seed}", row="godel", seed=seed, accuracy=acc)
    frame = load_records(tmp_path)
    below = collapse_threshold(frame, "quick")
    assert below == pytest.approx(90.0)
    ours = build_table(PAPER.tables["tnorms"], frame, "quick", REPO, below).ours()["godel"]
    assert ours.collapsed["accuracy"] == (False, True, False) and ours.n_collapsed == 1
    assert render_paper.ours_value(ours, "accuracy").endswith("(1 of 3 collapsed)")
    assert collapse_threshold(frame, "long") is None  # no baseline there: nothing collapses


def test_the_collapse_line_counts_only_runs_of_the_baseline_rows_configuration(tmp_path):
    """A run of another configuration filed under the baseline's row (another rate) moves
    neither the baseline's cell nor the line every table's collapses are called from."""
    for seed in range(3):
        write(tmp_path, "baseline", f"b{seed}", row="ce_pair", seed=seed, accuracy=0.95)
        write(tmp_path, "tnorms", f"g{seed}", row="godel", seed=seed, accuracy=0.80)
    other = {"optimizer": {"lr": 0.5}}
    write(tmp_path, "baseline", "x", row="ce_pair", seed=3, accuracy=0.10, extra_config=other)
    frame = load_records(tmp_path)
    assert len(frame[frame["row"] == "ce_pair"]) == 4  # loaded, filed under the row
    below = collapse_threshold(frame, "quick")
    assert below == pytest.approx(90.0)
    ours = build_table(PAPER.tables["tnorms"], frame, "quick", REPO, below).ours()
    assert ours["godel"].n_collapsed == 3


def test_a_run_of_another_task_collapses_below_its_reference_row_of_the_same_setting(tmp_path):
    """15-digit sums at 72% are not collapsed for being below the paper's baseline: another
    task's runs are held to their table's reference row of the same task setting."""
    for seed in range(3):
        write(tmp_path, "baseline", f"b{seed}", row="ce_pair", seed=seed, accuracy=0.95)
        for row, acc in (("product_sum_n15", 0.72), ("product_max_n15", 0.0)):
            write(tmp_path, "mnist_addition_digits", row, row=row, seed=seed, accuracy=acc)
        write(tmp_path, "mnist_addition_digits", "gm", row="product_gm_n4", seed=seed, accuracy=0.6)
    frame = load_records(tmp_path)
    table = PAPER.tables["mnist_addition_digits"]
    ours = build_table(table, frame, "quick", REPO, collapse_threshold(frame, "quick")).ours()
    assert ours["product_sum_n15"].n_collapsed == 0 and ours["product_max_n15"].n_collapsed == 3
    assert ours["product_gm_n4"].n_collapsed == 0  # no product_sum_n4 runs: no line to fall below


def test_profiles_never_mix(tmp_path):
    write(tmp_path, "tnorms", "q", row="godel", profile="quick", accuracy=0.5)
    write(tmp_path, "tnorms", "s", row="godel", profile="smoke", accuracy=0.1)
    assert tnorms_table(tmp_path, "quick").ours()["godel"].mean["accuracy"] == pytest.approx(50)
    assert tnorms_table(tmp_path, "smoke").ours()["godel"].mean["accuracy"] == pytest.approx(10)


def test_marks_missing_failed_undefined(tmp_path):
    write(tmp_path, "tnorms", "f", row="godel", status="failed")
    write(tmp_path, "tnorms", "u", row="product", cu_ant=None)
    write(tmp_path, "tnorms", "n", row="lukasiewicz", cu_ant=math.nan)  # NaN: no JSON, named
    with pytest.warns(RecordWarning, match="NaN is no JSON number"):
        ours = tnorms_table(tmp_path).ours()
    assert render_paper.ours_value(ours["godel"], "accuracy") == render_paper.FAILED
    assert render_paper.ours_value(ours["product"], "cu_ant") == render_paper.UNDEFINED
    assert "lukasiewicz" not in ours
    assert render_paper.ours_value(ours.get("nilpotent"), "accuracy") == render_paper.MISSING
    text = render_paper.markdown(tnorms_table(tmp_path), agreement(tnorms_table(tmp_path)))
    assert "failed: non-finite loss: step 3" in text and "ours n=0 (few), 1 failed" in text


def test_paper_dash_and_blank_marks():
    cells = PAPER.tables["same_symmetric"].rows[0][1]
    assert render_paper.paper_value(cells[1], "cu_ant") == render_paper.UNDEFINED  # printed "-"
    blank = PAPER.tables["same_symmetric"].rows[3][1][0]
    assert render_paper.paper_value(blank, "cons") == render_paper.NOT_PRINTED


def test_corrupt_file_warns_names_it_and_is_kept(tmp_path):
    write(tmp_path, "tnorms", "good", row="godel")
    bad = write(tmp_path, "tnorms", "bad", text='{"status": "ok", "config": ')
    with pytest.warns(RecordWarning, match=str(bad)):
        frame = load_records(tmp_path)
    assert len(frame) == 1 and bad.is_file()


def test_a_stub_or_a_list_is_named_once_and_never_counted(tmp_path):
    write(tmp_path, "tnorms", "good", row="godel")
    write(tmp_path, "tnorms", "stub", text='{"status": "ok", "config": {}}')
    write(tmp_path, "tnorms", "list", text="[]")
    with pytest.warns(RecordWarning) as caught:
        frame = load_records(tmp_path)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2 and len(frame) == 1
    assert "list.json: not a run record (a JSON list" in messages[0]
    assert "stub.json: not a run record (lacks the fields ['reason'" in messages[1]


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("best_test_accuracy", 97.78, "best_test_accuracy 97.78 lies outside [0, 1]"),
        ("test_accuracy", 1.5, "test_accuracy 1.5 lies outside [0, 1]"),
        ("cu_cons", -0.1, "cu_cons -0.1 lies outside [0, 1]"),
        ("cons_ratio", "0.5", "cons_ratio '0.5' is not a number"),
        ("steps", 5, "status ok after 5 steps, not its profile's 10000"),
    ],
)
def test_a_whole_record_with_an_impossible_value_is_named_and_never_counted(
    tmp_path, field, value, why
):
    for seed in range(3):
        write(tmp_path, "tnorms", "", row="godel", profile="long", seed=seed, accuracy=0.9)
    path = write(tmp_path, "tnorms", "", row="godel", profile="long", seed=3, accuracy=0.9)
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, field: value, "evaluated_step": 5}))
    with pytest.warns(RecordWarning, match=re.escape(why)):
        frame = load_records(tmp_path)
    assert len(frame) == 3 and path.is_file()  # left out, never changed
    table = build_table(PAPER.tables["tnorms"], frame, "long", REPO)
    assert table.ours()["godel"].n_ok == 3


def test_a_record_of_an_older_form_is_named_with_its_place_today(tmp_path):
    first = write(tmp_path, "tnorms", "", row="godel", accuracy=0.90)
    old = json.loads(first.read_text())
    kb = old["config"].pop("kb")  # before the `kb` group: its options nested in `problem.kb`
    old["config"]["problem"] = {"name": kb.pop("name"), "w_dfl": kb.pop("w_dfl"), "kb": kb}
    (tmp_path / "tnorms" / "0123456789abcdef.json").write_text(json.dumps(old))
    with pytest.warns(RecordWarning) as caught:
        frame = load_records(tmp_path)
    (message,) = [str(w.message) for w in caught]
    assert "tnorms/0123456789abcdef.json is in an older form" in message
    assert re.search(r"read as today's tnorms/[0-9a-f]{16}\.json", message)
    assert len(frame) == 1


def test_a_copied_or_misplaced_record_is_named_once_and_never_changes_a_cell(tmp_path):
    first = write(tmp_path, "tnorms", "", row="godel", accuracy=0.90)
    write(tmp_path, "tnorms", "", row="godel", seed=1, accuracy=0.80)
    before = tnorms_table(tmp_path).pairs()["godel"][1]
    (tmp_path / "tnorms" / "backup").mkdir()
    (tmp_path / "tnorms" / "backup" / first.name).write_bytes(first.read_bytes())
    (tmp_path / "tnorms" / f"copy of {first.name}").write_bytes(first.read_bytes())
    (tmp_path / "default").mkdir()
    (tmp_path / "default" / first.name).write_bytes(first.read_bytes())  # another table's folder
    seed2 = json.loads(first.read_text())
    seed2["config"]["seed"] = seed2["seed"] = 2  # a run no job wrote there: named by seed 0's hash
    (tmp_path / "tnorms" / "renamed.json").write_text(json.dumps(seed2))
    with pytest.warns(RecordWarning) as caught:
        frame = load_records(tmp_path)
    (message,) = [str(w.message) for w in caught]
    assert message.startswith("4 record file(s) not counted")
    assert f"tnorms/backup/{first.name} is a copy of tnorms/{first.name}" in message
    assert f"tnorms/copy of {first.name} is a copy of tnorms/{first.name}" in message
    assert f"default/{first.name} is a copy of tnorms/{first.name}" in message
    assert "tnorms/renamed.json holds the run of tnorms/" in message
    assert len(frame) == 2 and frame["run"].is_unique
    after = build_table(PAPER.tables["tnorms"], frame, "quick", REPO).pairs()["godel"][1]
    assert (after.n_ok, after.mean, after.std) == (before.n_ok, before.mean, before.std)
    assert (after.n_ok, after.number("accuracy")) == (2, pytest.approx(85.0))


def test_committed_records_each_sit_at_their_own_place():
    """A rename or a hash change that moved any committed record would drop its run."""
    root = REPO / "results" / "records"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecordWarning)
        warnings.filterwarnings("ignore", ".*one configuration and seed trained", RecordWarning)
        frame = load_records(root)  # (a seed trained on a GPU and on the CPU: named, counted)
    assert len(frame) == sum(1 for _ in root.rglob("*.json"))


@pytest.mark.slow
def test_a_rendering_with_fewer_ok_runs_never_replaces_a_table_unless_forced(tmp_path, capsys):
    records, out = tmp_path / "records", tmp_path / "out"
    write(records, "tnorms", "", row="godel")
    second = write(records, "tnorms", "", row="godel", seed=1)
    args = [f"--records={records}", f"--out={out}", "--tables=tnorms"]
    assert main(args) == 0
    table, index = out / "tables" / "tnorms.md", out / "tables" / "README.md"
    before, index_before = table.read_text(), index.read_text()
    assert publish.ok_runs(before) == {"quick": 2}
    assert main([*args, "--profile=smoke"]) == 0  # no smoke records: every cell would be missing
    assert "kept 1 table(s)" in capsys.readouterr().out
    assert (table.read_text(), index.read_text()) == (before, index_before)
    second.unlink()
    assert main(args) == 0
    assert "tnorms.md (quick: 2 ok runs, the new rendering 1)" in capsys.readouterr().out
    assert table.read_text() == before
    assert main([*args, "--force"]) == 0
    assert publish.ok_runs(table.read_text()) == {"quick": 1}


def test_a_rendering_passes_a_report_each_profile_and_its_words_go_where_it_says(tmp_path):
    """A report (`python -m campaign` passes the paper's claims) decides on each profile's
    tables, adds lines under a paper's table, columns and sections to the index, and writes
    files of its own once the framework's are written; none of it without a report."""

    class Mine(Report):
        columns = ("mine",)

        def decide(self, r, paper, frame, repo):
            return replace(r, selected=(*r.selected, "baseline"))  # a decision it can see

        def under_table(self, r, name):
            return ["", f"mine under {name}"]

        def index_opening(self):
            return " Mine opens.\n\nMine's paragraph."

        def index_cells(self, r, name):
            return [f"cell {name}"]

        def index_sections(self, r):
            return ["", f"### Mine at {r.profile}"]

        def index_closing(self, r):
            return ["", "mine closes"]

        def write(self, results, out, command):
            index = (out / "tables" / "README.md").is_file()  # the framework's files first
            seen.append(([r.profile for r in results], command.split(" --")[0], index))
            (out / "extra.md").write_text("mine\n")
            return [out / "extra.md"]

    records, out, plain = tmp_path / "records", tmp_path / "out", tmp_path / "plain"
    write(records, "tnorms", "", row="godel")
    seen = []
    args = [f"--records={records}", "--tables=tnorms"]
    assert main([*args, f"--out={out}"], Mine(), prog="python -m campaign") == 0
    assert seen == [(["quick"], "python -m campaign", True)]
    table = (out / "tables" / "tnorms.md").read_text()
    assert table.count("Generated by `python -m campaign ")
    assert table.endswith("\nmine under tnorms\n")
    assert "\nmine under baseline\n" in (out / "tables" / "baseline.md").read_text()
    index = (out / "tables" / "README.md").read_text()
    assert "ratios in [0, 1]. Mine opens.\n\nMine's paragraph.\n\n## Profile `quick`" in index
    assert "| rho acc | mine |" in index and "| cell tnorms |" in index
    assert index.index("### Mine at quick") < index.index("Figure: ") < index.index("mine closes")
    assert main([*args, f"--out={out}", "--profile=long"], Mine()) == 0
    assert len(seen) == 1  # a rendering of fewer profiles than present writes no shared file
    assert main([*args, f"--out={plain}"]) == 0
    assert sorted(p.name for p in (plain / "tables").iterdir()) == [
        "README.md", "tnorms.md", "tnorms.tex"
    ]  # fmt: skip
    assert "mine" not in (plain / "tables" / "tnorms.md").read_text().lower()


MINE = outputs.markdown("mine's own")  # a report's own page (`Mine.files`)


class Mine(Report):
    """A report with a file of its own, which it names (`files`) before it writes it."""

    def files(self, results, out):
        return {out / "mine.md": MINE}

    def write(self, results, out, command):
        return [outputs.write_text(out / "mine.md", "# Mine\n\nmine's own\n", MINE)]


def _files(out: Path) -> dict[Path, bytes]:
    """Every file under `out` with its bytes."""
    return {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    "foreign",
    ["tables/README.md", "tables/tnorms.tex", "figures/tnorms_paper_vs_ours_quick.png", "mine.md"],
)
def test_a_rendering_refused_at_any_of_its_files_writes_none(tmp_path, capsys, foreign):
    """Every file a rendering writes (its tables, figures, the index, a report's own) is checked
    before the first is written: another tool's file at any of them is refused in one line and
    leaves every file as it was (none made in a new --out, none replaced in a rendered one)."""
    records, new, out = tmp_path / "records", tmp_path / "new", tmp_path / "out"
    write(records, "tnorms", "", row="godel")
    args = [f"--records={records}", "--tables=tnorms"]
    assert main([*args, f"--out={out}"], Mine()) == 0
    write(records, "tnorms", "", row="godel", seed=1)  # a second seed: the tables change
    for place in (new, out):
        page = place / foreign
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_bytes(b"# Other tool\n\nGenerated by `python -m other`.\n")
        before = _files(place)
        assert main([*args, f"--out={place}"], Mine()) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(page) in err and "nothing written" in err, err
        assert _files(place) == before
    assert sorted(p.relative_to(new).as_posix() for p in new.rglob("*")) == [
        *([foreign.split("/")[0]] if "/" in foreign else []), foreign
    ]  # fmt: skip


def test_the_renderer_takes_every_name_a_reproduction_takes(tmp_path, capsys):
    from dfl_bench.results import cell_configs

    records = tmp_path / "records"
    write(records, "default", "")
    out = tmp_path / "out"
    assert main([f"--records={records}", f"--out={out}", f"--tables={cell_configs.DEFAULT}"]) == 0
    assert sorted(p.name for p in (out / "tables").iterdir()) == ["README.md"]
    assert "| default | 1 | 0 |" in (out / "tables" / "README.md").read_text()


def families_table(tmp_path: Path):
    """operator_families with three seeds of product, frank_p10 (below it), dombi_p2 (on par,
    its cons undefined) and one of hamacher_p2."""
    for seed in range(3):
        product = 0.96 + seed / 1000
        write(tmp_path, "operator_families", "", row="product", seed=seed, accuracy=product)
        frank = 0.90 + seed / 1000
        write(
            tmp_path, "operator_families", "", row="frank_p10", seed=seed, accuracy=frank, best=0.95
        )
        dombi = 0.961 - seed / 1000
        write(
            tmp_path, "operator_families", "", row="dombi_p2", seed=seed, accuracy=dombi, cons=None
        )
    write(tmp_path, "operator_families", "", row="hamacher_p2", accuracy=0.97)
    return build_table(PAPER.tables["operator_families"], load_records(tmp_path), "quick", REPO)


def test_a_table_beyond_the_paper_compares_each_row_with_its_reference(tmp_path):
    text = render_beyond.markdown(families_table(tmp_path))
    header = (
        "| row | n | Accuracy | cons | cu_cons | cu_ant | wall time (min) | accuracy - product |"
    )
    assert header in text
    assert "| frank_p10 [1] [2] | 3 | 90.10 ± 0.10 (best 95.00 ± 0.00) |" in text
    assert "| 1.0 ± 0.0 | -6.00 [-6.23, -5.77] below |" in text
    assert "| hamacher_p2 [1] [2] | 1 (few) |" in text and "(few) n=1/3 |" in text
    # -0.10, 90% interval [-0.27, +0.07] inside +-0.5: equivalence shown (TOST)
    assert "| dombi_p2 [1] [2] | 3 |" in text and "-0.10 [-0.33, +0.13] equivalent |" in text


def test_sweep_rows_come_from_the_swept_value(tmp_path):
    for s in (9.0, 2.5, 42.0):
        write(tmp_path, "sigmoidal_s", f"s{s}", extra_config={"implication": {"s": s}})
    table = build_table(PAPER.tables["sigmoidal_s"], load_records(tmp_path), "quick", REPO)
    assert {"9", "2.5", "42"} <= set(table.ours())
    assert [row.label for row in table.rows if row.extra] == ["42"]


def test_mixed_commits_warn(tmp_path):
    write(tmp_path, "tnorms", "a", row="godel", commit="aaa")
    write(tmp_path, "tnorms", "b", row="godel", seed=1, commit="bbb")
    table = tnorms_table(tmp_path)
    assert table.mixed_commits == {"godel": ("aaa", "bbb")}
    assert "WARNING" in render_paper.markdown(table, agreement(table))


def test_provenance_and_reuse_become_footnotes(tmp_path):
    provenance = {
        "kb.w_dfl": {"source": "authors' code", "note": "config.py"},
        "tnorm.p": {"source": "paper", "note": ""},
    }
    path = write(tmp_path, "tnorms", "p", row="godel", extra_config={"provenance": provenance})
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "reused_from": "aggregation/exists_gm_p1_5"}))
    text = render_paper.markdown(tnorms_table(tmp_path), agreement(tnorms_table(tmp_path)))
    assert "`kb.w_dfl`: authors' code (config.py)" in text
    assert "tnorm.p" not in text
    assert "reused from aggregation/exists_gm_p1_5" in text


def test_spearman_known_cases():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert spearman([1, 2], [1, 2]) is None


def test_agreement_shares(tmp_path):
    # paper: godel 20.4 / 0.47, product 20.3 / 0.46 (Table tnorms)
    write(tmp_path, "tnorms", "g", row="godel", accuracy=0.208, cons=0.50)
    write(tmp_path, "tnorms", "p", row="product", accuracy=0.210, cons=0.60)
    result = agreement(tnorms_table(tmp_path))
    assert result.accuracy_within == (1, 2)  # the accuracy margin, 0.5: 20.8 in, 21.0 out
    # in: cons 0.50 vs 0.47, cu_ant 0.9 vs 0.90 and 0.92; out: cons 0.60 vs 0.46, both cu_cons
    assert result.ratio_within == (3, 6)


@pytest.mark.slow
def test_cli_renders_every_table_and_figure(tmp_path, capsys):
    records = tmp_path / "records"
    write(records, "tnorms", "g", row="godel")
    write(records, "sigmoidal_s", "s", extra_config={"implication": {"s": 9.0}})
    write(records, "broken", "x", text="not json")
    out = tmp_path / "out"
    assert main(["--records", str(records), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "broken/x.json" in captured.err
    for name in PAPER.tables:
        assert (out / "tables" / f"{name}.md").is_file()
        assert (out / "tables" / f"{name}.tex").read_text().startswith("\\begin{table}")
    index = (out / "tables" / "README.md").read_text()
    assert "[tnorms](tnorms.md)" in index and "Profile `quick`" in index
    figures = {p.name for p in (out / "figures").glob("*.png")}
    assert figures == {  # a table without runs draws no figure
        "sigmoidal_s_quick.png",
        "sigmoidal_s_paper_vs_ours_quick.png",
        # s = 9 is b0 = -0.5: one configuration, both tables; no paper-vs-ours scatter of b0's,
        # of which the paper prints no number (its figure is not in the source)
        "sigmoidal_b0_quick.png",
        "analyze_measures_quick.png",
        "tnorms_paper_vs_ours_quick.png",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tables", "tnorms,nope"], "unknown experiment(s) ['nope']"),
        (["--tables", ","], "--tables ',' names no experiment; leave it out for all"),
        (
            ["--profile", "huge"],
            "unknown profile 'huge'; valid choices: "
            "['frontier', 'long', 'minute', 'paper', 'quick', 'smoke']",
        ),
    ],
)
def test_cli_bad_input_is_one_line(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["--records", str(tmp_path), "--out", str(tmp_path / "o"), *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_wandb_tables_log_offline(tmp_path, monkeypatch):
    from dfl_bench.results.wandb_tables import log_tables, rows

    monkeypatch.setenv("WANDB_MODE", "disabled")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    write(tmp_path / "r", "tnorms", "g", row="godel", accuracy=0.5)
    result = build(PAPER, load_records(tmp_path / "r"), "quick", ["tnorms"], REPO)
    columns, data = rows(result, "tnorms")
    assert data[0][:4] == ["godel", "T-norm and dual t-conorm (sum9)", "$T_G$", 1]
    assert data[0][columns.index("paper_accuracy")] == 20.4
    assert data[0][columns.index("ours_accuracy")] == pytest.approx(50.0)
    assert "logged 1 tables (disabled)" == log_tables([result])


def test_cli_tables_selects_files_and_keeps_the_index_whole(tmp_path):
    write(tmp_path / "r", "tnorms", "g", row="godel")
    out = tmp_path / "out"
    assert main(["--records", str(tmp_path / "r"), "--out", str(out), "--tables", "tnorms"]) == 0
    names = sorted(p.name for p in (out / "tables").glob("*.md"))
    assert names == ["README.md", "tnorms.md"]  # the index stays whole
    assert "[aggregation](aggregation.md)" in (out / "tables" / "README.md").read_text()


K10 = {"model": {"ntn_k": 10, "ntn_bias": True}}  # the code's NTN head: a setting beside a row's


def test_compare_puts_two_settings_of_one_table_side_by_side(tmp_path, capsys):
    from dfl_bench.results import compare

    a, b = tmp_path / "a", tmp_path / "b"
    for seed, acc in ((0, 0.90), (1, 0.92)):
        write(a, "same_symmetric", "g", row="godel_R", seed=seed, accuracy=acc, cons=0.2)
    write(a, "same_symmetric", "p", row="product_S", accuracy=0.95, cu_ant=None)
    write(a, "same_symmetric", "x", row="product_S", seed=1, status="failed", accuracy=0.10)
    write(b, "same_symmetric", "g", row="godel_R", accuracy=0.80, cons=0.5, extra_config=K10)
    write(b, "same_symmetric", "p", row="product_S", accuracy=0.955, cu_ant=None, extra_config=K10)
    out = tmp_path / "cmp.md"
    sides = [f"--a={a}:same_symmetric", f"--b={b}:same_symmetric"]
    k10 = ["--b-set=model.ntn_k=10", "--b-set=model.ntn_bias=true"]
    assert compare.main([*sides, *k10, "--labels=k50,k10", f"--out={out}"]) == 0
    text = out.read_text()
    assert "| godel_R | 2/1 | 91.00 | 80.00 | -11.00 | 0.200 | 0.500 | +0.300 |" in text
    assert "| product_S | 1/1 | 95.00 | 95.50 | +0.50 |" in text and "undef." in text
    assert "differs by more than 1 point: ['godel_R']" in text
    assert "--b-set=model.ntn_k=10 --b-set=model.ntn_bias=true" in text  # the command, whole
    assert compare.main(sides) == 2  # side b's runs are of another configuration than its rows'
    assert "no ok quick record of table 'same_symmetric' with []" in capsys.readouterr().err
    assert compare.main([sides[0], f"--b={b}:nope", *k10]) == 2
    assert "no table 'nope'; choose from ['default', 'same_symmetric'," in capsys.readouterr().err


def test_compare_counts_a_row_s_own_configuration_only(tmp_path):
    """A run of a row at another learning rate (or without the side's setting) is not averaged
    into the row: it is left out and counted."""
    from dfl_bench.results import compare

    a, b, both = tmp_path / "a", tmp_path / "b", "same_symmetric,default"
    for side, acc, extra in ((a, 0.90, {}), (b, 0.93, K10)):
        write(side, "same_symmetric", "g", row="godel_R", accuracy=acc, extra_config=extra)
        write(side, "default", "d", accuracy=acc + 0.05, extra_config=extra)
    lr = {"optimizer": {"lr": 0.5}}
    write(a, "same_symmetric", "o", row="godel_R", seed=1, accuracy=0.1, extra_config=lr)
    write(b, "same_symmetric", "o", row="godel_R", seed=1, accuracy=0.1)
    out = tmp_path / "cmp.md"
    args = [f"--a={a}:{both}", f"--b={b}:{both}"]
    k10 = ["--b-set=model.ntn_k=10", "--b-set=model.ntn_bias=true"]
    assert compare.main([*args, *k10, "--labels=k50,k10", f"--out={out}"]) == 0
    text = out.read_text()
    assert "| godel_R | 1/1 | 90.00 | 93.00 | +3.00 |" in text
    assert "| default | 1/1 | 95.00 | 98.00 | +3.00 |" in text
    assert "another configuration than their row's: 1 k50 and 1 k10 runs" in text


def test_compare_keeps_a_row_two_tables_give_apart(tmp_path):
    """tnorms and sum9_symmetric both have a row `godel` (two configurations): a side naming
    both shows each under its table, never their mean."""
    from dfl_bench.results import compare

    write(tmp_path, "tnorms", "t", row="godel", accuracy=0.20)
    write(tmp_path, "sum9_symmetric", "s", row="godel", accuracy=0.95)
    means = compare.cells(tmp_path, ["tnorms", "sum9_symmetric"], "quick")
    assert means.loc["tnorms/godel", "test_accuracy"] == pytest.approx(20.0)
    assert means.loc["sum9_symmetric/godel", "test_accuracy"] == pytest.approx(95.0)
    assert compare.cells(tmp_path, ["tnorms"], "quick").index.tolist() == ["godel"]


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("row=godel_R", "row=godel_R names a cell"),
        ("seed=3", "seed=3 names a cell"),
        ("+experiment=tnorms", "+experiment=tnorms names a cell"),
        ("rows.godel_R.lr=0.5", "rows.godel_R.lr=0.5 names a cell"),
        ("+trainer.benchmark=true", "['+trainer.benchmark=true']: trainer"),
        # the table the rows read their operators from (conf/families): what a row trains
        ("families.godel.tnorm.name=product", "families.godel.tnorm.name=product names a cell"),
        # what a job refuses, in its own line: the knowledge base's weights ...
        ("kb.weights=5", "['kb.weights=5']: kb.weights must map formulas to weights (e.g. {1: "),
        ("kb.weights={1:2.0,2:2.0,3:2.0}", "} is kb.w_dfl=2 kb.weights=null spelled another "
         "way; write that"),  # godel_R's kb.w_dfl (1) spelled another way
        ("kb.weights={1:[2]}", "]: kb.weights: the weight of same/1 must be a finite number"),
        ("kb.weights={1:x", "{1:x': an override that does not parse"),
        # ... a value the row sets, a deletion, an added key at its absent value, unhashed keys
        ("tnorm.p=3", "]: tnorm.p=3 is refused: experiment 'same_symmetric' sets tnorm from "
         "its row (row=godel_S); pick another row"),
        ("~kb.scope", "]: ~kb.scope is refused: deleting kb.scope trains its code's default"),
        ("+optimizer.warmup=0", "optimizer.warmup=0 is what leaving optimizer.warmup out means"),
        ("threads=0", "]: config.threads must be an integer in [1, "),
    ],
)  # fmt: skip
def test_compare_refuses_a_side_setting_that_names_a_cell_or_the_job_refuses(
    tmp_path, capsys, setting, said
):
    from dfl_bench.results import compare

    write(tmp_path, "same_symmetric", "g", row="godel_R", accuracy=0.9)
    side = f"--a={tmp_path}:same_symmetric"
    assert compare.main([side, f"--b={tmp_path}:same_symmetric", f"--b-set={setting}"]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1


def test_compare_refuses_a_setting_of_a_group_the_tables_task_does_not_read(tmp_path, capsys):
    """MNIST addition reads no knowledge base: `kb.*` beside its rows is refused as a job
    refuses it (tasks/values.TASKS' `ignores`), not counted as a configuration no run has."""
    from dfl_bench.results import compare

    write(tmp_path, "same_symmetric", "g", row="godel_R", accuracy=0.9)
    sides = [f"--a={tmp_path}:mnist_addition", f"--b={tmp_path}:same_symmetric"]
    assert compare.main([*sides, "--a-set=kb.w_dfl=2", "--profile=long"]) == 2
    err = capsys.readouterr().err
    assert "['kb.w_dfl=2']: kb.w_dfl=2 is refused: task 'mnist_addition' does not read kb," in err
    assert len(err.strip().splitlines()) == 1


def test_the_index_shows_the_seed_spread_of_the_baseline_and_default(tmp_path):
    from dfl_bench.results.publish import seed_spread

    for seed, acc in enumerate((0.90, 0.92, 0.94)):
        write(tmp_path, "baseline", f"b{seed}", row="ce_pair", seed=seed, accuracy=acc, cons=None)
    write(tmp_path, "default", "d", seed=0, accuracy=0.95, cons=0.1)
    write(tmp_path, "tnorms", "t", row="godel", accuracy=0.5)
    lines = seed_spread(load_records(tmp_path), "quick")
    text = "\n".join(lines)
    assert "| baseline / ce_pair | 3 | 0, 1, 2 | 92.00 ± 2.00 | 92.00 ± 2.00 | undef. |" in text
    assert "| default | 1 | 0 | 95.00 ± 0.00 | 95.00 ± 0.00 | 0.100 ± 0.000 |" in text
    assert not any("tnorms" in line for line in lines)
    assert seed_spread(load_records(tmp_path), "paper") == []
    write(tmp_path, "default", "d2", seed=1, accuracy=0.5, extra_config={"model": {"ntn_k": 8}})
    lines = "\n".join(seed_spread(load_records(tmp_path), "quick"))
    assert "| default (config " in lines and "| 1 | 1 | 50.00 ± 0.00 |" in lines


def real_record(
    root: Path, overrides: list[str], accuracy: float, seed: int = 0, experiment: str = "tnorms"
) -> dict:
    """A whole record of the config `python -m dfl_bench <overrides> seed=<seed>` trains."""
    from dfl_bench.lifecycle import records, sweep, train

    config = train.resolved_config(sweep.job_config([*overrides, f"seed={seed}"]))
    summary = {"test_accuracy": accuracy, "best_test_accuracy": accuracy}
    summary["steps"] = config["profile"]["max_steps"]
    record = records.make_record(
        status="ok", reason=None, config=config, summary=summary, experiment=experiment
    )
    path = records.record_path(root, experiment, records.config_hash(config))
    records.write_record(path, record)
    return config


def test_a_cell_averages_one_configuration_and_labels_each_other(tmp_path):
    godel = ["+experiment=tnorms", "row=godel", "profile=smoke"]
    real_record(tmp_path, godel, 0.10)
    real_record(tmp_path, godel, 0.20, seed=1)
    real_record(tmp_path, [*godel, "kb.w_dfl=0.001"], 0.50)
    real_record(tmp_path, [*godel, "profile.max_steps=40"], 0.90)
    table = tnorms_table(tmp_path, "smoke")
    cell = table.pairs()["godel"][1]
    assert (cell.n_ok, cell.number("accuracy")) == (2, pytest.approx(15.0))
    extra = {row.label: row.cells[0][1] for row in table.rows if row.extra}
    assert extra.keys() == {"godel, kb.w_dfl=0.001", "godel, profile.max_steps=40"}
    assert extra["godel, kb.w_dfl=0.001"].number("accuracy") == pytest.approx(50.0)
    assert extra["godel, profile.max_steps=40"].n_ok == 1
    text = render_paper.markdown(table, agreement(table))
    assert "| **godel, kb.w_dfl=0.001 (not in the paper)** paper |" in text
    assert ". another configuration than row `godel` (kb.w_dfl=0.001): not averaged" in text
    assert not any("w_dfl`: authors' code" in n for n in extra["godel, kb.w_dfl=0.001"].notes)


def test_a_record_counts_for_the_row_whose_configuration_it_trained(tmp_path):
    """`row=product_sum task.digits=2` is row product_sum_n2's configuration: it counts there
    (not as another configuration of product_sum), and two digits are not compared with one."""
    base = ["+experiment=mnist_addition", "profile=smoke"]
    for seed in range(3):
        real_record(
            tmp_path, [*base, "row=product_sum", "task.digits=2"], 0.9, seed, "mnist_addition"
        )
        real_record(tmp_path, [*base, "row=product_sum"], 0.97 + seed / 100, seed, "mnist_addition")
    frame = load_records(tmp_path)
    assert set(frame["row"]) == {"product_sum"}
    table = build_table(PAPER.tables["mnist_addition"], frame, "smoke", REPO)
    ours = table.ours()
    assert (ours["product_sum_n2"].n_ok, ours["product_sum"].n_ok) == (3, 3)
    assert ours["product_sum_n2"].number("accuracy") == pytest.approx(90.0)
    assert not any(row.extra for row in table.rows)
    text = render_beyond.markdown(table)
    line = next(x for x in text.splitlines() if x.startswith("| product_sum_n2 "))
    assert line.startswith("| product_sum_n2 [1] | 3 | 90.00 ± 0.00 (best 90.00 ± 0.00) |")
    assert line.endswith("| another task setting |")


def test_a_row_whose_only_records_trained_another_configuration_is_not_the_papers_cell(
    tmp_path,
):
    real_record(tmp_path, ["+experiment=tnorms", "row=product", "kb.w_dfl=0.001"], 0.50)
    table = tnorms_table(tmp_path)
    assert table.pairs()["product"][1] is None
    extra = {row.label: row.cells[0][1] for row in table.rows if row.extra}
    assert extra.keys() == {"product, kb.w_dfl=0.001"}
    assert extra["product, kb.w_dfl=0.001"].number("accuracy") == pytest.approx(50.0)


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("no/such", "records folder {r} does not exist"),
        ("file", "records folder {r} is a file, not a folder"),
        ("empty", "{r} holds no run record"),
        ("stub", "{r} holds no run record (1 file(s) skipped above)"),
    ],
)
def test_records_that_are_not_there_are_an_error_and_nothing_is_written(
    tmp_path, capsys, where, message
):
    records = tmp_path / where
    if where == "file":
        records.write_text("{}")
    elif where == "empty":
        records.mkdir()
    elif where == "stub":
        write(records, "tnorms", "g", text='{"status": "ok"}')
    assert main(["--records", str(records), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "[dfl_bench.results] error: " + message.format(r=records)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_other_records_render_beside_them_never_over_the_committed_results(tmp_path, capsys):
    committed = REPO / "results" / "tables" / "README.md"
    before = committed.read_text()
    records = tmp_path / "mine"
    write(records, "tnorms", "g", row="godel")
    assert main(["--records", str(records), "--tables", "tnorms"]) == 0
    assert (records / "tables" / "tnorms.md").is_file() and (records / "figures").is_dir()
    assert f"under {records}/" in capsys.readouterr().out
    assert main(["--records", str(records), "--tables", "tnorms"]) == 0  # renders aren't records
    assert "1 records from" in capsys.readouterr().out
    assert committed.read_text() == before
    unwritable = tmp_path / "a-file"
    unwritable.write_text("")
    assert main(["--records", str(records), "--out", str(unwritable)]) == 2
    assert capsys.readouterr().err.startswith(f"[dfl_bench.results] error: --out={unwritable} ")


def test_the_make_targets_render_beside_the_records_they_name():
    import subprocess

    for target, name in (("tables", "RECORDS_DIR"), ("reproduce-tables", "RECORDS")):
        command = ["make", "-n", target, f"{name}=else/records"]
        text = subprocess.run(command, cwd=REPO, capture_output=True, text=True).stdout
        assert '--records-dir "else/records"' in text and "--out" not in text
        text = subprocess.run([*command, "OUT=o"], cwd=REPO, capture_output=True, text=True).stdout
        assert '--out "o"' in text


def test_every_make_target_that_renders_writes_the_campaigns_blocks_too():
    """A target that renders the committed tables runs `python -m campaign` (the framework's
    rendering, then the write-up's campaign blocks), never the framework's alone."""
    import subprocess

    for target in ("tables", "reproduce-tables", "addition-harvest", "seed-plan-harvest"):
        text = subprocess.run(
            ["make", "-n", target], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout
        assert re.search(r"-m campaign(\s|$)", text), target
        assert not re.search(r"-m dfl_bench\.results(\s|$)", text), target


def test_the_results_and_the_planner_import_no_trainer_library():
    """Reading records, rendering and planning need neither Lightning, W&B nor torch; --help
    needs not even pandas."""
    import subprocess
    import sys

    trainer = ("lightning", "wandb", "torchmetrics", "torch")
    probe = (
        "import sys; import dfl_bench.results.__main__, dfl_bench.reproduction.plan, "
        "dfl_bench.results.publish, dfl_bench.reproduction.reproduce; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({trainer!r})))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr[-2000:]
    helped = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "dfl_bench.results", "--help"],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    assert helped.returncode == 0 and "usage: python -m dfl_bench.results" in helped.stdout
    imported = {line.split("|")[-1].strip().split(".")[0] for line in helped.stderr.splitlines()}
    assert imported & {*trainer, "pandas", "scipy", "matplotlib"} == set()


def test_a_cell_trained_on_two_devices_says_which_seeds_trained_where(tmp_path):
    write(tmp_path, "tnorms", "a", row="godel", seed=0)
    write(tmp_path, "tnorms", "b", row="product", seed=0)
    write(tmp_path, "tnorms", "c", row="product", seed=1)
    cpu_only = render_paper.markdown(tnorms_table(tmp_path), agreement(tnorms_table(tmp_path)))
    assert "trained on" not in cpu_only and "devices: cpu 3" in cpu_only
    gpu = {"trainer": {"accelerator": "gpu"}}
    write(tmp_path, "tnorms", "d", row="godel", seed=1, extra_config=gpu)
    table = tnorms_table(tmp_path)
    assert table.ours()["godel"].n_ok == 2  # one cell: the device is not hashed
    text = render_paper.markdown(table, agreement(table))
    assert "trained on cpu: seed(s) 0; gpu: seed(s) 1 (two devices" in text
    assert text.count("trained on") == 1 and "devices: cpu 3, gpu 1" in text


def untrained_table(tmp_path: Path):
    """mnist_addition with three runs of lukasiewicz_sum (no gradient reached two of them) and
    one of product_sum."""
    for seed, reached in ((0, False), (1, False), (2, True)):
        path = write(tmp_path, "mnist_addition", "a", row="lukasiewicz_sum", seed=seed)
        record = json.loads(path.read_text())
        path.write_text(json.dumps({**record, "gradient_reached": reached}))
    write(tmp_path, "mnist_addition", "p", row="product_sum")
    return build_table(PAPER.tables["mnist_addition"], load_records(tmp_path), "quick", REPO)


def test_runs_no_gradient_reached_are_named_in_a_footnote(tmp_path):
    text = render_beyond.markdown(untrained_table(tmp_path))
    assert "no gradient reached the network in seed(s) 0, 1 (ADAM's moments were 0" in text
    assert text.count("no gradient reached") == 1


def test_a_seed_trained_twice_counts_with_the_tables_own_record_and_names_the_other(tmp_path):
    """A configuration and seed trained twice to other numbers (a GPU run is not deterministic;
    a record from elsewhere may claim an earlier `finished`) counts in each table with that
    table's own record; the other is named on the console and in the table's notes."""
    later = write(tmp_path, "aggregation", "", row="forall_log_product", accuracy=0.9604)
    record = json.loads(later.read_text())
    later.write_text(json.dumps({**record, "finished": "2026-01-02T00:00:00+00:00"}))
    config = {**record["config"], "experiment_name": "default"}
    first = tmp_path / "default" / later.name  # the same configuration and seed, trained apart
    first.parent.mkdir()
    first.write_text(
        json.dumps(
            {**record, "config": config, "experiment": "default"}
            | {"test_accuracy": 0.9618, "best_test_accuracy": 0.9618}
        )
    )
    with pytest.warns(RecordWarning, match="one configuration and seed trained to different"):
        frame = load_records(tmp_path)  # two CPU runs apart: said, not blamed on a GPU
    assert sorted(frame["test_accuracy"]) == [0.9604, 0.9618]  # each keeps its own
    twins = frame.set_index("experiment")["twin"]
    assert twins["aggregation"] == f"default/{first.stem}.json"
    assert twins["default"] == f"aggregation/{later.stem}.json"
    table = build_table(PAPER.tables["aggregation"], frame, "quick", REPO)
    cell = table.ours()["forall_log_product"]
    assert cell.number("accuracy") == pytest.approx(96.04)  # the table's own, not the earlier
    assert any(
        "seed 0 trained twice" in n
        and "own record (final accuracy 96.04)" in n
        and f"default/{first.stem}.json holds another run of it (96.18" in n
        for n in cell.notes
    )
    assert any("two CPU runs" in n and "not deterministic" not in n for n in cell.notes)
    gpu = {**record["config"], "trainer": {**record["config"]["trainer"], "accelerator": "gpu"}}
    later.write_text(json.dumps({**record, "config": gpu, "finished": "2026-01-02T00:00:00+00:00"}))
    with pytest.warns(RecordWarning, match="a GPU run of one seed is not deterministic"):
        frame = load_records(tmp_path)
    assert set(frame["twin_why"]) == {"a GPU run of one seed is not deterministic"}


def test_a_seeds_run_on_another_labeled_split_is_a_run_of_its_cell_not_a_twin(tmp_path):
    """A cell's runs differ in seed and split seed (CELL_ASIDE): seed 0 on `data.split_seed=5`
    counts beside seed 0 on its own split, neither named a twin (nor left out by hash order)."""
    for split, accuracy in ((None, 0.90), (5, 0.92)):
        extra = {"data": {"split_seed": split}}
        write(tmp_path, "tnorms", "", row="godel", seed=0, accuracy=accuracy, extra_config=extra)
    write(tmp_path, "tnorms", "", row="godel", seed=1, accuracy=0.94)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecordWarning)  # no "trained to different numbers"
        frame = load_records(tmp_path)
    assert frame["twin"].isna().all() and sorted(frame["split_seed"]) == [0, 1, 5]
    cell = build_table(PAPER.tables["tnorms"], frame, "quick", REPO).ours()["godel"]
    assert cell.n_ok == 3 and sorted(cell.values["accuracy"]) == pytest.approx([90, 92, 94])
    assert not any("trained twice" in note for note in cell.notes)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"wall_time_s": -3.0}, "wall_time_s -3.0 is not a time"),
        ({"wall_time_s": "fast"}, "wall_time_s 'fast' is not a time"),
        ({"best_test_accuracy": 0.1}, "best_test_accuracy 0.1 lies below its final"),
        ({"steps": "4"}, "steps '4' is not a whole number of steps"),
        ({"seed": None}, "seed None is not a seed"),
        ({"machine": "x"}, "machine 'x' is no machine"),
        ({"machine": {"cpu": ["x"]}}, r"machine \{'cpu': \['x'\]\} is no machine"),
        ({"experiment": "/abs/where"}, "experiment '/abs/where' is no experiment's name"),
    ],
)
def test_a_record_with_a_field_that_cannot_be_counted_is_skipped_naming_it(tmp_path, change, why):
    path = write(tmp_path, "tnorms", "g", row="godel", accuracy=0.5)
    write(tmp_path, "tnorms", "p", row="product", accuracy=0.6)
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, **change}))
    with pytest.warns(RecordWarning, match=rf"{path.name}: not a run record \({why}"):
        frame = load_records(tmp_path)
    assert list(frame["row"]) == ["product"]  # the other record still counts, the render goes on


def test_the_seed_spread_pools_every_folder_like_the_tables(tmp_path):
    """The default configuration's seeds trained under another table's folder count in its
    seed-spread line, as they count in every table that shows it."""
    from dfl_bench.lifecycle import records
    from dfl_bench.results import publish

    away = write(tmp_path, "aggregation", "", row="forall_log_product", seed=1, accuracy=0.94)
    record = json.loads(away.read_text())
    config = {**record["config"], "experiment_name": "default", "seed": 0}
    digest = records.config_hash(config)
    records.write_record(
        tmp_path / "default" / f"{digest}.json",
        {**record, "config": config, "seed": 0, "experiment": "default", "config_hash": digest}
        | {"test_accuracy": 0.96, "best_test_accuracy": 0.96},
    )
    frame = load_records(tmp_path)
    assert len(set(frame["configuration"])) == 1  # one configuration, two folders
    (line,) = [row for row in publish.seed_spread(frame, "quick") if row.startswith("| default")]
    assert "| 2 | 0, 1 | 95.00 ± 1.41 |" in line  # the default folder alone: n = 1


def test_one_configuration_and_seed_count_once_with_one_record_in_every_table():
    """The default configuration's seed 0 trained twice on a GPU (two numbers): every table that
    shows it counts the one record git added first, whatever table it is rendered in."""
    import warnings

    from dfl_bench.results.load import RecordWarning, load_records, pooled

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordWarning)
        frame = load_records(REPO / "results" / "records")
    twins = frame[frame["twin_counted"].notna()]
    assert len(twins) >= 2 and twins["twin_counted"].sum() == 1  # one counted per seed
    configuration, profile = twins.iloc[0]["configuration"], twins.iloc[0]["profile"]
    seed = twins.iloc[0]["seed"]
    chosen = {
        home: pooled(frame, configuration, profile, home).set_index("seed").loc[seed, "path"]
        for home in ("aggregation", "implications", "default")
    }
    assert len(set(chosen.values())) == 1, chosen


def test_help_composes_no_experiment(monkeypatch, capsys):
    """`python -m dfl_bench.results --help` lists the tables from their files' names: nothing is
    composed for it (it took 3.5 s composing every experiment)."""
    from dfl_bench.results import __main__ as cli

    monkeypatch.setattr(cli, "load_paper", lambda: pytest.fail("--help composed the tables"))
    with pytest.raises(SystemExit) as done:
        cli.parse_args(["--help"])
    assert done.value.code == 0 and "same_symmetric" in capsys.readouterr().out


def test_latex_text_escapes_every_special_character_once():
    """A backslash became `\\textbackslash\\{\\}` (its braces escaped again) and `^`, `~` stayed
    raw, so a record's value with them broke the .tex."""
    from dfl_bench.results.render_paper import tex_escape

    assert tex_escape("a\\b^c~d{e}_f & 1 ± 2") == (
        r"a\textbackslash{}b\textasciicircum{}c\textasciitilde{}d\{e\}\_f \& 1 $\pm$ 2"
    )


def test_a_staged_search_row_holds_its_search_runs_and_shows_its_final_stage_apart(tmp_path):
    """An experiment that pins its budget composes its rows at that budget (they were 'does not
    compose' at profile=minute_search, so a row with two stages lost its cell); a record whose
    class lived in another module (`nets.paper._target_` before nets.py) counts for its cell."""
    from dfl_bench.lifecycle import records

    base = ["+experiment=mnist_addition_minute_search", "row=s2500_lr2e3"]
    experiment = "mnist_addition_minute_search"
    real_record(tmp_path, base, 0.96, 0, experiment)
    real_record(tmp_path, [*base, "stage=final"], 0.97, 3, experiment)
    config = real_record(tmp_path, base, 0.95, 1, experiment)
    path = records.record_path(tmp_path, experiment, records.config_hash(config))
    record = json.loads(path.read_text())
    path.unlink()
    old = "dfl_bench.tasks.mnist.model.MnistNet"
    record["config"]["nets"]["paper"]["_target_"] = record["config"]["net"]["_target_"] = old
    digest = records.config_hash(record["config"])
    records.write_record(records.record_path(tmp_path, experiment, digest), record)
    frame = load_records(tmp_path)
    table = build_table(load_paper().tables[experiment], frame, "minute_search", REPO)
    assert table.ours()["s2500_lr2e3"].n_ok == 2
    extra = {row.label: row.cells[0][1] for row in table.rows if row.extra}
    assert extra.keys() == {"s2500_lr2e3, stage=final, task.validation=0.0"}
    assert extra["s2500_lr2e3, stage=final, task.validation=0.0"].number("accuracy") == 97.0
