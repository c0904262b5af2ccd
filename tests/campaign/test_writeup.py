"""The write-up cannot go stale: results/README.md's verdict block is what the committed records
give, and its prose around the block states rules, not results."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import pytest

from campaign import plan_report
from campaign.report import beyond_words, verdict_report
from campaign.report import writeup as campaign_writeup
from campaign.report.paper_report import PaperReport
from dfl_bench.results import publish
from dfl_bench.results.cells import Table
from dfl_bench.results.load import RecordWarning, load_records
from dfl_bench.results.paper import load_paper

REPO = Path(__file__).resolve().parents[2]
README = REPO / "results" / "README.md"
SECTION = "### The committed reproduction"
# The numbers the section's prose may state: its rules (95% and 90% intervals, p = 1 for an
# inconclusive claim, 95% intervals holding 0 or not,
# p < 0.05) and the evaluation grids.
RULES = {"0", "1", "90", "95", "0.05", "2,500", "1,000", "2", "3"}  # 2, 3: JOBS=2 SEEDS=3


def committed_block(
    begin: str = verdict_report.BEGIN, end: str = verdict_report.END, text: str | None = None
) -> str:
    text = README.read_text() if text is None else text
    return text[text.index(begin) : text.index(end) + len(end)]


def test_the_write_up_states_no_result_outside_its_generated_blocks():
    text = README.read_text()
    section = text[text.index(SECTION) : text.index("**W&B dashboard.**")]
    campaign = committed_block(*campaign_writeup.CAMPAIGN_MARKERS)
    prose = section.replace(committed_block(), "").replace(campaign, "")
    numbers = set(re.findall(r"\d[\d,.]*\d|\d", prose)) - RULES
    assert not numbers, f"numbers outside the generated block: {sorted(numbers)}"


def test_patching_replaces_only_the_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{verdict_report.BEGIN}\nold\n{verdict_report.END}\nafter\n")
    assert verdict_report.patch(readme, f"{verdict_report.BEGIN}\nnew\n{verdict_report.END}")
    assert (
        readme.read_text() == f"before\n{verdict_report.BEGIN}\nnew\n{verdict_report.END}\nafter\n"
    )
    assert not verdict_report.patch(tmp_path / "none.md", "x")


def test_a_write_up_that_is_a_pipe_or_a_folder_is_refused_not_waited_on(tmp_path):
    """The write-up is read before its blocks are patched in (`untrusted.read_text`): a pipe
    there is no plain file (read in a thread, so the test fails, not hangs, where it waits)."""
    import os
    import threading

    from dfl_bench.untrusted import UntrustedFile

    os.mkfifo(tmp_path / "README.md")
    (tmp_path / "folder.md").mkdir()
    said: list[str] = []

    def patch(name: str) -> None:
        with pytest.raises(UntrustedFile) as raised:
            verdict_report.patch(tmp_path / name, "block")
        said.append(str(raised.value))

    reader = threading.Thread(target=lambda: [patch(n) for n in ("README.md", "folder.md")])
    reader.start()
    reader.join(timeout=60)
    if reader.is_alive():  # let the waiting reader go before failing
        with open(tmp_path / "README.md", "w"):
            pass
    assert said == [
        f"{tmp_path / 'README.md'}: not a plain file (a pipe, a device or a socket)",
        f"{tmp_path / 'folder.md'}: a folder, not a file",
    ]


STAMP = re.compile(r" on \S+ \([^)]*\); rendering trains nothing")  # the index's time and host


def rendered_files(root: Path) -> dict[str, str | bytes]:
    """Every file `python -m campaign` writes under `root` (results/ or a copy), by its path
    there; the index without the time and machine it was rendered on."""
    files: dict[str, str | bytes] = {"README.md": (root / "README.md").read_text()}
    for folder in ("tables", "recipe_search", "collapse_search"):
        for path in sorted((root / folder).iterdir()):
            files[f"{folder}/{path.name}"] = STAMP.sub(" on ...", path.read_text())
    for path in sorted((root / "figures").iterdir()):
        files[f"figures/{path.name}"] = path.read_bytes()
    return files


@pytest.mark.slow
def test_rendering_the_committed_records_gives_every_committed_file_byte_for_byte(tmp_path):
    """`make tables` (python -m campaign) on the committed records writes the committed files:
    every table file, the index (but for its time), verdicts.md, the write-up's blocks, the
    searches' pages and the figures (a figure is redrawn only when what it shows changed), none
    more, none fewer."""
    out = tmp_path / "results"
    out.mkdir()
    shutil.copy(README, out / "README.md")  # its generated blocks are patched in place
    shutil.copytree(REPO / "results" / "figures", out / "figures")
    (out / "records").symlink_to(REPO / "results" / "records")  # the searches' pages read it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordWarning)
        frame = load_records(REPO / "results" / "records")
    paper = load_paper()
    profiles = sorted(frame["profile"].dropna().unique())
    report = PaperReport()
    results = [publish.build(paper, frame, p, list(paper.tables), REPO, report) for p in profiles]
    written, kept = publish.write(results, frame, out, "python -m campaign", report=report)
    assert kept == [] and written
    (out / "records").unlink()
    assert rendered_files(out) == rendered_files(REPO / "results")


def test_the_decided_claims_list_each_verdict_of_ours_with_its_numbers_holds_first():
    from types import SimpleNamespace

    from campaign.report.claims import Claim, Verdict

    def item(name):
        return Claim(name, "tnorms", "10.2", "a sentence", lambda view: Verdict("holds", ""))

    verdicts = [
        (item("a"), Verdict("holds", "p"), Verdict("fails", "+0.1 [-0.2, +0.4]")),
        (item("b"), Verdict("fails", "p"), Verdict("not measurable", "too few")),
        (item("c"), Verdict("holds", "p"), Verdict("holds", "+1.0 [+0.5, +1.5]")),
    ]
    lines = verdict_report.decided(SimpleNamespace(profile="long", verdicts=verdicts))
    assert lines[0] == "Decided at `long` (2 of 3 claims):"
    rows = [line for line in lines if line.startswith("| `")]
    assert rows == [
        "| `c` (10.2) | tnorms | holds | **holds** | +1.0 [+0.5, +1.5] |",
        "| `a` (10.2) | tnorms | holds | **fails** | +0.1 [-0.2, +0.4] |",
    ]
    # the undecided claim is named with its own reason, not a blanket one
    assert lines[-4:] == ["Not measurable at `long` (1):", "", "- `b` (10.2, tnorms): too few", ""]
    assert verdict_report.decided(SimpleNamespace(profile="long", verdicts=verdicts[1:2])) == []


def test_a_row_decided_by_its_collapses_says_so_beside_the_baseline():
    """A row listed above or below the baseline without an interval of its own (too few runs
    that did not collapse) was decided by its collapse rate, and the row shows that rate."""
    verdicts = (REPO / "results" / "tables" / "verdicts.md").read_text()
    lines = [line for line in verdicts.splitlines() if " the baseline beyond the noise |" in line]
    entries = [e for line in lines for e in re.findall(r"\[no interval\][^,|]*", line)]
    assert entries, "no row decided by its collapses: the test checks nothing"
    assert all("[no interval] (collapsed " in e for e in entries), entries


def test_the_seed_plans_progress_counts_each_cells_planned_seeds_with_an_ok_run(tmp_path):
    from types import SimpleNamespace

    import pandas as pd

    plan = tmp_path / "plan.json"
    cells = {
        "formulas/f1": {"seeds": 3, "override": "row=f1"},
        "formulas/f2": {"seeds": 2, "override": "row=f2"},
    }
    needs = [  # y has no verdict: not measurable
        {"claim": c, "seeds": 3, "cells": ["formulas/f1"]} for c in ("x", "y", "x")
    ]
    spec = {"profile": "long", "power": 0.8, "max_seeds": 10, "cells": cells, "needs": needs}
    plan.write_text(json.dumps(spec))
    records = pd.DataFrame(
        [  # f1: seeds 0, 2 ok, 1 failed, 5 beyond the plan; f2: 0 and 1 ok; another config
            ("a", 0, "ok"), ("a", 1, "failed"), ("a", 2, "ok"), ("a", 5, "ok"),
            ("b", 0, "ok"), ("b", 1, "ok"), ("c", 1, "ok"),
        ],
        columns=["configuration", "seed", "status"],
    )  # fmt: skip
    ours = {"f1": SimpleNamespace(configuration="a"), "f2": SimpleNamespace(configuration="b")}
    table = SimpleNamespace(ours=lambda: ours, records=records)
    table.own_records = lambda key: Table.own_records(table, key)
    verdicts = [(SimpleNamespace(name="x"), None, SimpleNamespace(status="holds"))]
    r = SimpleNamespace(profile="long", tables={"formulas": table}, verdicts=verdicts)
    assert plan_report.progress(r, plan) == (
        "the committed seed plan (`results/seed_plan/`): 4 of 5 planned runs trained, 1 of 2 "
        "cells complete; its 2 claims now 1 holds, 0 fails, 0 inconclusive, 1 not measurable; a "
        "verdict resting on a cell still training may move"
    )
    assert plan_report.progress(SimpleNamespace(profile="quick"), plan) is None
    assert plan_report.progress(r, tmp_path / "none.json") is None


def test_the_seed_plans_claims_stand_beside_their_verdicts_now(tmp_path):
    from types import SimpleNamespace

    import pandas as pd

    plan = tmp_path / "plan.json"
    cells = {
        "formulas/f1": {"seeds": 2, "override": "row=f1"},
        "formulas/f2": {"seeds": 2, "override": "row=f2"},
    }
    needs = [  # a: both comparisons decidable (f1 complete, f2 not); b: none (f3 not planned)
        {"claim": "a", "cells": ["formulas/f1", "formulas/f2"], "seeds": 6},
        {"claim": "a", "cells": ["formulas/f1", "formulas/f3"], "seeds": 10},
        {"claim": "b", "cells": ["formulas/f2", "formulas/f3"], "seeds": None},
    ]
    spec = {"profile": "long", "power": 0.8, "max_seeds": 10, "cells": cells, "needs": needs}
    plan.write_text(json.dumps(spec))
    records = pd.DataFrame(
        [("a", 0, "ok"), ("a", 1, "ok"), ("b", 0, "ok"), ("b", 1, "failed")],
        columns=["configuration", "seed", "status"],
    )
    ours = {"f1": SimpleNamespace(configuration="a"), "f2": SimpleNamespace(configuration="b")}
    table = SimpleNamespace(ours=lambda: ours, records=records)
    table.own_records = lambda key: Table.own_records(table, key)
    verdicts = [
        (SimpleNamespace(name=name), None, SimpleNamespace(status=status))
        for name, status in (("a", "holds"), ("b", "inconclusive"), ("c", "fails"))
    ]
    r = SimpleNamespace(profile="long", tables={"formulas": table}, verdicts=verdicts)
    lines = plan_report.outcome(r, plan)
    assert lines[0].startswith(
        "The seed plan's claims at `long` (inconclusive when [`seed_plan/README.md`]"
        "(seed_plan/README.md) was written): 2, now 1 holds, 0 fails, 1 inconclusive. The plan "
        "expected to decide every undecided comparison of 1 of them (each at 80% power within "
        "10 seeds a cell), and 1 of those are decided;"
    )
    assert lines[4:6] == [
        "| `a` | 2 of 2 | 1 of 2 | holds (interim + planned seeds) |",
        "| `b` | 0 of 1 | 0 of 1 | inconclusive |",
    ]
    assert plan_report.outcome(SimpleNamespace(profile="quick"), plan) == []


def test_a_plans_claim_is_one_printable_line_and_its_markdown_is_shown_as_text(tmp_path):
    """A claim from the plan file with a terminal escape or a line break (a heading of its own
    in results/README.md) is refused in one line; a `|` or a tag in one is shown as text."""
    from types import SimpleNamespace

    import pandas as pd

    plan = tmp_path / "plan.json"
    cells = {"formulas/f1": {"seeds": 1, "override": "row=f1"}}
    table = SimpleNamespace(records=pd.DataFrame(columns=["configuration", "seed", "status"]))
    table.ours = lambda: {"f1": SimpleNamespace(configuration="a")}
    table.own_records = lambda key: Table.own_records(table, key)
    r = SimpleNamespace(profile="long", tables={"formulas": table}, verdicts=[])
    for claim in ("a\x1b[31mred\x07", "a\n# injected heading", "a`b"):
        need = {"claim": claim, "cells": ["formulas/f1"], "seeds": 3}
        spec = {"profile": "long", "power": 0.8, "max_seeds": 10, "cells": cells}
        plan.write_text(json.dumps({**spec, "needs": [need]}))
        with pytest.raises(ValueError, match="its needs are no list"):
            plan_report.outcome(r, plan)
    need = {"claim": "a|b<img src=x>", "cells": ["formulas/f1"], "seeds": 3}
    plan.write_text(json.dumps({**spec, "needs": [need]}))
    assert plan_report.outcome(r, plan)[4].startswith("| `a\\|b&lt;img src=x&gt;` | 1 of 1 |")


def test_the_front_page_holds_no_generated_block_and_stays_short():
    """README.md is a front page: no block a data commit would rewrite, at most 150 lines."""
    front = (REPO / "README.md").read_text()
    assert "generated by" not in front and "<!--" not in front
    assert len(front.splitlines()) <= 150


def test_the_front_pages_paper_budget_times_are_the_records():
    """README.md's minutes a run took at the paper's budget, per knowledge base, are the range
    of the committed records' wall times (runs that trained, not reused copies)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_records(REPO / "results" / "records")
    runs = frame[(frame["profile"] == "paper") & (frame["status"] == "ok")]
    runs = runs[runs["reused_from"].isna()]
    text = " ".join((REPO / "README.md").read_text().split())
    for kb, minutes in runs.groupby("kb")["wall_time_s"]:
        low, high, n = round(minutes.min() / 60), round(minutes.max() / 60), len(minutes)
        assert f"{low}–{high} min for `{kb}` ({n}" in text, kb


def test_a_table_beyond_the_paper_is_worded_at_the_profile_its_records_have():
    """operator_families has one run at `paper` and 3 seeds a row at `long`: its block speaks
    of `long` (it once spoke of `paper`: 0 of 12 rows)."""
    text = README.read_text()
    begin, end = beyond_words.beyond_markers("operator_families")
    block = text[text.index(begin) : text.index(end)]
    assert "Profile `long`:" in block and "Profile `paper`" not in block


def test_the_block_names_a_table_beyond_the_paper_only_at_a_profile_where_it_has_records():
    """At profile `paper` most tables beyond the paper have no run (their own or one of the same
    configuration): the block's section of that profile does not name them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordWarning)
        frame = load_records(REPO / "results" / "records")
    paper = load_paper()
    rendered = publish.build(paper, frame, "paper", list(paper.tables), REPO, PaperReport())
    section = verdict_report.summary([rendered])
    beyond = [name for name, table in rendered.tables.items() if table.paper.beyond]
    empty = [name for name in beyond if not rendered.tables[name].ours()]
    assert len(empty) >= 5
    for name in beyond:
        assert (f"- {name} (beyond the paper)" in section) is (name not in empty), name


def test_the_paper_budget_sentence_decides_nothing_from_fewer_than_three_runs_that_count():
    """`both` of four seeds, two of them collapsed: its two other runs lie far above `sum9` and
    far below the paper's 98.0, which Welch and Student's t over two runs would call; the
    sentence says that nothing is decided and carries no verdict word."""
    from types import SimpleNamespace

    from dfl_bench.results.cell_configs import PAPER_PROFILE

    def ours(values, collapsed=()):
        return SimpleNamespace(
            n_ok=len(values),
            n={"accuracy": len(values)},
            values={"accuracy": values},
            collapsed={"accuracy": collapsed},
            number=lambda column: sum(values) / len(values),
            std={"accuracy": 0.1},
        )

    both = ours([99.5, 99.6, 10.0, 11.0], (False, False, True, True))
    sum9 = ours([97.0, 97.1, 97.2, 97.1])
    paper = SimpleNamespace(number=lambda column: 98.0)
    best = SimpleNamespace(
        records=SimpleNamespace(empty=False),
        ours=lambda: {"both": both, "sum9": sum9},
        pairs=lambda: {"both": (paper, None), "sum9": (paper, None)},
    )
    decided = SimpleNamespace(profile=PAPER_PROFILE, tables={"best": best})
    text = campaign_writeup.paper_budget([decided])
    assert "n = 2/4: fewer than 3 runs that did not collapse on a side, nothing decided." in text
    assert not re.search(r"\*\*(holds|fails|inconclusive)\*\*|\b(above|below|equivalent)\b", text)
