"""The paper's report in the files a rendering writes: the paper budget's runs in the index, the
write-up's words on a table beyond the paper, and the files that sum every profile left as they
are by a rendering of fewer."""

from __future__ import annotations

import json

import pytest

from campaign.report import beyond_words, budget_runs, verdict_report
from campaign.report.paper_report import PaperReport
from dfl_bench.results.__main__ import main
from dfl_bench.results.load import load_records
from dfl_bench.results.publish import build
from tests.results.test_results import PAPER, REPO, families_table, untrained_table, write


def test_the_paper_budget_lists_each_run_once_with_every_cell_it_fills(tmp_path):
    def paper_run(experiment, row, **kwargs):
        return write(tmp_path, experiment, "r", row=row, profile="paper", **kwargs)

    paper_run("best", None, accuracy=0.978, best=0.980, extra_config={"kb": {"name": "sum9"}})
    for experiment, row in (("aggregation", "forall_log_product"),
                            ("implications", "sigmoidal_reichenbach")):  # fmt: skip
        path = paper_run(experiment, row, accuracy=0.96, best=0.97)
        record = json.loads(path.read_text())
        path.write_text(json.dumps({**record, "reused_from": "default/d.json"}))
    r = build(PAPER, load_records(tmp_path), "paper", list(PAPER.tables), REPO)
    runs = {run.origin: run for run in budget_runs.runs(r)}
    assert len(runs) == 2 and runs["default/d.json"].cells == {
        "aggregation/forall_log_product": 96.3,
        "implications/sigmoidal_reichenbach": 96.3,
    }
    (best,) = (run for origin, run in runs.items() if origin.startswith("best/"))
    assert best.cells == {"best/sum9": 97.7} and (best.final, best.best) == (97.8, 98.0)
    text = "\n".join(budget_runs.runs_table(r))
    assert "| best/sum9 | 97.7 | 97.80 (98.00) | +0.10 |" in text
    assert text.count("| `default/d.json` |") == 1 and "| 1.0 |" in text
    assert "`best/sum9` (paper 97.7): 97.80 (best 98.00), 1 min" in budget_runs.runs_in_words(r)
    assert budget_runs.runs_table(build(PAPER, load_records(tmp_path), "quick", [], REPO)) == []


def test_a_table_beyond_the_paper_is_worded_row_by_row_against_its_reference(tmp_path):
    words = beyond_words.beyond(families_table(tmp_path))
    assert "below `product`: `frank_p10`" in words and "equivalent `product`: `dombi_p2`" in words
    assert "too few seeds for `product`: `hamacher_p2`;" in words
    assert "no records beside `product`: `yager_p1_5`, `hamacher_p0`, `frank_p0_1`," in words
    assert "no derivative left (cons undefined): `dombi_p2`" in words


def test_runs_no_gradient_reached_are_named_in_the_beyond_words(tmp_path):
    table = untrained_table(tmp_path)
    assert "no gradient reached the network: `lukasiewicz_sum`" in beyond_words.beyond(table)
    assert beyond_words.untrained_runs(table, "product_sum") == 0


@pytest.mark.slow  # renders twice, every table
def test_a_rendering_of_one_profile_leaves_what_sums_every_profile(tmp_path, capsys):
    records, out = tmp_path / "records", tmp_path / "out"
    for profile in ("quick", "long"):
        write(records, "tnorms", "g", row="godel", profile=profile, accuracy=0.5)
        write(records, "baseline", "b", row="ce_pair", profile=profile, accuracy=0.95)
    (out / "tables").mkdir(parents=True)
    (out / "README.md").write_text(f"intro\n{verdict_report.BEGIN}\nold\n{verdict_report.END}\n")
    assert main([f"--records={records}", f"--out={out}"], PaperReport()) == 0
    shared = [out / "tables" / "README.md", out / "tables" / "verdicts.md", out / "README.md"]
    before = [path.read_text() for path in shared]
    assert "## Profile `quick`" in before[0] and "Profile `quick`" in before[2]
    args = [f"--records={records}", f"--out={out}", "--profile=long", "--tables=tnorms"]
    assert main(args, PaperReport()) == 0
    assert [path.read_text() for path in shared] == before
    assert "left as they are by a rendering of ['long']" in capsys.readouterr().out
    assert "## tnorms, profile `quick`" in (out / "tables" / "tnorms.md").read_text()  # kept


def test_rows_against_the_baseline_are_decided_within_their_table():
    """A row clearly above the baseline stays above after Benjamini-Hochberg over its table; a
    row with too few seeds is set aside, and no baseline says so."""
    from campaign.report.baseline_rows import against_baseline
    from dfl_bench.results.cells import Ours

    def cell(*values: float) -> Ours:
        n = {"accuracy": len(values)}
        return Ours(
            len(values), 0, {}, {}, n, (None, None), (), (), (), values={"accuracy": values}
        )

    base = cell(95.0, 95.2, 94.8, 95.1)
    rows = {"up": cell(97.0, 97.1, 96.9, 97.2), "same": cell(95.1, 94.9, 95.0, 95.2)}
    found = against_baseline({**rows, "few": cell(99.0, 99.0)}, base)
    assert [key for key, _ in found.compared] == ["up", "same"] and found.few == ("few",)
    assert [row.split()[0] for row in found.beyond(1)] == ["up"] and found.beyond(-1) == []
    assert against_baseline(rows, None).missing == "no baseline"
    assert against_baseline(rows, cell(95.0, 95.1)).missing == "the baseline has 2 seed(s)"
