"""The paper's numbers (dfl_bench/results/paper_numbers.yaml) against the experiment configs and
against the LaTeX source (../shared/paper, skipped where it is absent)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from dfl_bench.lifecycle.resolve import resolved_config
from dfl_bench.lifecycle.sweep import job_config
from dfl_bench.results.paper import (
    COLUMNS,
    DASH,
    DATA_FILE,
    Published,
    cell_key,
    load_paper,
    main_tables,
)

REPO = Path(__file__).resolve().parents[2]
TEX = REPO.parent / "shared" / "paper" / "analyzing-dfl-operators.tex"
PAPER = load_paper()


def experiment_config(name: str) -> dict:
    """conf/experiment/<name>.yaml as plain data."""
    return yaml.safe_load((REPO / "conf" / "experiment" / f"{name}.yaml").read_text())


def config_keys(name: str, key: str | None) -> set[str]:
    """The rows an experiment runs: its `rows`, or the values its sweep gives `key`."""
    config = experiment_config(name)
    if key == "row":
        return set(job_config([f"+experiment={name}"]).rows)  # rows may come from conf/families
    params = ((config.get("hydra") or {}).get("sweeper") or {}).get("params") or {}
    if key is None:
        assert not params, f"{name}: a single-row table must not sweep"
        return set(PAPER.tables[name].keys())
    swept = params[key.removesuffix(".name")]
    return {cell_key(yaml.safe_load(v)) for v in str(swept).split(",")}


def test_every_experiment_has_a_table_from_the_paper_or_beyond_it():
    experiments = {p.stem for p in (REPO / "conf" / "experiment").glob("*.yaml")}
    assert experiments == set(PAPER.tables)
    beyond = {name for name, table in PAPER.tables.items() if table.beyond}
    assert beyond == experiments - set(yaml.safe_load(DATA_FILE.read_text())["tables"])
    assert "operator_families" in beyond


def test_a_table_beyond_the_paper_takes_its_rows_from_its_sweep():
    table = PAPER.tables["operator_families"]
    swept = experiment_config("operator_families")["hydra"]["sweeper"]["params"]["row"]
    assert table.keys() == swept.split(",") and table.reference == "product"
    assert all(v is None for cell in table.cells() for v in cell.values.values())
    assert table.caption.startswith("Operators beyond the paper: the parametric t-norm families")


def test_published_numbers_beside_a_table_are_read_and_checked():
    digits = PAPER.tables["mnist_addition_digits"].published
    stochlog = [p for p in digits if p.system == "DeepStochLog"]
    assert [(p.setting, p.accuracy, p.note) for p in stochlog] == [
        ((("digits", 4),), 92.7, ""),
        ((("digits", 15),), None, "time-out"),
    ]
    with pytest.raises(ValueError, match="needs a note"):
        Published.parse({"system": "X", "task": {"digits": 4}, "source": "s"}, "here")
    with pytest.raises(ValueError, match="percentage"):
        Published.parse(
            {"system": "X", "task": {"digits": 4}, "accuracy": 927, "source": "s"}, "here"
        )
    with pytest.raises(ValueError, match="among"):
        Published.parse({"system": "X", "accuracy": 92.7, "source": "s", "acc": 1}, "here")


def test_published_numbers_are_not_part_of_a_job():
    config = job_config(["+experiment=mnist_addition_digits", "row=product_sum_n4"])
    assert "published" in config and "published" not in resolved_config(config)


@pytest.mark.parametrize("name", sorted(n for n, t in PAPER.tables.items() if not t.beyond))
def test_paper_rows_match_config_rows(name):
    table = PAPER.tables[name]
    assert set(table.keys()) == config_keys(name, table.key)
    counts: dict[str, int] = {}
    for cell in table.cells():
        counts[cell.key] = counts.get(cell.key, 0) + 1
    shared = {key for key, n in counts.items() if n > 1}
    assert shared == set(table.shared), "a row filling several cells needs a documented reason"


def test_baseline_and_text_results():
    assert (PAPER.baseline, PAPER.baseline_std) == (95.18, 0.204)
    best = {c.key: c.number("accuracy") for c in PAPER.tables["best"].cells()}
    assert best == {"sum9": 97.7, "both": 98.0}
    s9 = {c.key: c.number("accuracy") for c in PAPER.tables["sigmoidal_s"].cells()}
    assert s9["9"] == 97.3 and sum(v is not None for v in s9.values()) == 1


def test_contradictions_are_recorded():
    notes = PAPER.tables["same_symmetric"].notes[0]
    assert notes["values"] == {"text": 0.01, "table": 0.86} and notes["shows"] == "table"
    assert "swapped" in PAPER.tables["symmetric_aggregators"].notes[0]["text"]
    assert "caption" in PAPER.tables["implications"].notes[0]["text"]


def tex_value(text: str) -> tuple[float | str | None, bool]:
    """A LaTeX cell: (number, '-' or None for blank; bold)."""
    text = text.strip().rstrip("\\").strip()
    match = re.fullmatch(r"\\(?:bft|textbf)\{(.*)\}", text)
    inner = match.group(1).strip() if match else text
    if inner == "":
        return None, False
    return (DASH if inner == DASH else float(inner)), bool(match)


def tex_rows(label: str) -> list[list[str]]:
    """The data rows of the tabular with \\label{label}, each a list of cells."""
    source = TEX.read_text()
    end = source.index(f"\\label{{{label}}}")
    start = source.rindex("\\begin{tabular}", 0, end)
    body = source[start : source.index("\\end{tabular}", start)]
    rows = []
    for raw in body.split("\\\\")[1:]:
        raw = raw.replace("\\hline", "").strip()
        if not raw or "\\mc{" in raw or "\\multicolumn" in raw:
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)&", raw)]
        if any(cells):
            rows.append(cells)
    return rows


@pytest.mark.skipif(not TEX.is_file(), reason="the paper's LaTeX source is not beside the repo")
@pytest.mark.parametrize(
    "name", [n for n, t in PAPER.tables.items() if (t.label or "").startswith("table:")]
)
def test_transcription_matches_the_latex(name):
    table = PAPER.tables[name]
    rows = tex_rows(table.label)
    assert len(rows) == len(table.rows)
    for cells, (label, paper_cells) in zip(rows, table.rows, strict=True):
        assert " ".join(cells[0].split()) == label
        start = 1
        for index, cell in enumerate(paper_cells):
            if table.group_labels and index > 0:
                assert cells[start].strip() == cell.label
                start += 1
            printed = [tex_value(c) for c in cells[start : start + len(COLUMNS)]]
            printed += [(None, False)] * (len(COLUMNS) - len(printed))
            assert [v for v, _ in printed] == [cell.values[c] for c in COLUMNS], (label, index)
            bold = [c for c, (_, b) in zip(COLUMNS, printed, strict=True) if b]
            assert bold == list(cell.bold), (label, index)
            start += len(COLUMNS)


def test_the_main_text_tables_are_one_flag_of_the_data_file():

    assert PAPER.main == (
        "same_symmetric",
        "sum9_symmetric",
        "aggregation",
        "tnorms",
        "implications",
    )
    assert main_tables() == PAPER.main


@pytest.mark.parametrize(
    ("seeds", "word"),
    [
        ((93.5, 93.4, 93.6), "above"),
        ((92.0, 92.1, 91.9), "below"),
        ((90.0, 95.0, 93.0), "inconclusive"),
        ((92.7, 92.8, 92.6), "equivalent"),  # TOST: the 90% interval within the margin
    ],
)
def test_a_published_number_is_compared_with_our_seeds(seeds, word):
    from dfl_bench.results.cells import Ours
    from tests.results.test_published import published_cell

    values = {"accuracy": seeds}
    ours = Ours(3, 0, {}, {}, {"accuracy": 3}, (None, None), (), (), (), values=values)
    published = Published.parse(
        {"system": "X", "task": {"digits": 1}, "accuracy": 92.7, "source": "s"}, "here"
    )
    assert published_cell(published, ours).endswith(word)
    few = Ours(2, 0, {}, {}, {"accuracy": 2}, (None, None), (), (), (), values=values)
    assert published_cell(published, few) == "92.7"
    timeout = Published.parse(
        {"system": "X", "task": {"digits": 1}, "note": "time-out", "source": "s"}, "here"
    )
    assert published_cell(timeout, ours) == "time-out"


def test_a_published_number_is_compared_with_our_runs_that_did_not_collapse():
    from dfl_bench.results.cells import Ours
    from tests.results.test_published import published_cell

    published = Published.parse(
        {"system": "X", "task": {"digits": 1}, "accuracy": 92.7, "source": "s"}, "here"
    )

    def ours(seeds: tuple[float, ...], collapsed: tuple[bool, ...]) -> Ours:
        values, flags = {"accuracy": seeds}, {"accuracy": collapsed}
        n = {"accuracy": len(seeds)}
        return Ours(3, 0, {}, {}, n, (None, None), (), (), (), values=values, collapsed=flags)

    assert published_cell(published, ours((93.5, 93.4, 93.6, 20.0), (False,) * 3 + (True,))) == (
        "92.7 (ours: the 3 runs that did not collapse): ours +0.80 [+0.55, +1.05] above"
    )  # over the mixture the interval would hold 0
    assert published_cell(published, ours((93.5, 93.4, 20.0), (False, False, True))) == (
        "92.7: fewer than 3 of our runs did not collapse, no comparison"
    )  # no above or below from fewer than 3 runs that count
