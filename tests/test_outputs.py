"""A command's --out (dfl_bench/outputs.py): a new file, or one the same
command wrote (its committed output too), is written; an existing run record, any other file, a
folder or a symbolic link is refused in one line (exit 2) and left byte for byte, and so is a
comparison's --out inside a records folder it reads; no committed file that a tool did not write
(a doc, another tool's output) carries its mark."""

from __future__ import annotations

import importlib
import shutil
import subprocess
from functools import cache
from pathlib import Path, PurePosixPath

import pytest

from campaign import (
    addition_budget,
    addition_collapse,
    collapse_search,
    final_nets,
    headline_plan,
    recipe_search,
    seed_plan,
)
from campaign.bench import __main__ as bench
from campaign.bench import (
    addition_timing,
    bench_report,
    cuda_session,
    family_timing,
    step_vs_commit,
)
from dfl_bench import outputs
from dfl_bench.results import __main__ as render
from dfl_bench.results import compare
from dfl_bench.theory import __main__ as theory
from dfl_bench.theory import carry_gradients, family_theory, theory_report

REPO = Path(__file__).resolve().parent.parent
RECORD = REPO / "results" / "ntn_comparison" / "k50" / "default" / "ebc7452c01ad8965.json"
PLAN_README = "# The seed plan\n\nWritten by `python -m campaign.seed_plan plan`.\n"
HEADLINE_README = "# The headline plan\n\nWritten by `python -m campaign.headline_plan` now.\n"

# tool -> (its main, its arguments (OUT: the --out, RECORDS: a records folder holding RECORD),
# the file it writes under OUT ("": OUT is that file), that file as committed under results/)
WRITTEN = {
    "compare": (
        compare.main,
        ["--a=RECORDS:default", "--b=RECORDS:default", "--profile=quick", "--out=OUT"],
        "",
        "ntn_comparison/README.md",
    ),
    "carry_gradients": (
        carry_gradients.main,
        ["--digits=1", "--seeds=1", "--images=2", "--out=OUT"],
        "",
        "theory/carry_gradients.md",
    ),
    "time-addition": (
        addition_timing.main,
        ["--digits", "1", "--repeats", "1", "--images", "2", "--out", "OUT"],
        "",
        "bench/addition_digits.md",
    ),
    "time-families": (
        family_timing.main,
        ["--repeats", "1", "--warmup", "0", "--rows", "hamacher_p0", "--out", "OUT"],
        "",
        "bench/families.md",
    ),
    "recipe_search": (
        recipe_search.main,
        ["--records-dir", "RECORDS", "--experiment", "digit_ceiling_search", "--out", "OUT"],
        "digit_ceiling_search.md",
        "recipe_search/digit_ceiling_search.md",
    ),
    "collapse_search": (
        collapse_search.main,
        ["--records-dir", "RECORDS", "--out", "OUT"],
        "README.md",
        "collapse_search/README.md",
    ),
    "final_nets": (
        final_nets.main,
        ["--records-dir", "RECORDS", "--out", "OUT"],
        "README.md",
        "final_nets/README.md",
    ),
    "addition_budget": (
        addition_budget.main,
        ["--records-dir", "RECORDS", "--out", "OUT"],
        "README.md",
        "addition_budget/README.md",
    ),
    "seed_plan": (
        seed_plan.main,
        ["plan", "--records-dir", "RECORDS", "--out", "OUT"],
        "plan.json",
        "seed_plan/plan.json",
    ),
    "headline_plan": (
        headline_plan.main,
        ["--records-dir", "RECORDS", "--out", "OUT"],
        "README.md",
        "headline_plan/README.md",
    ),
    "family_theory": (
        family_theory.main,
        ["--samples", "10", "--out", "OUT"],
        "README.md",
        "theory/families/README.md",
    ),
    "theory": (theory.main, ["--quick", "--out", "OUT"], "README.md", "theory/README.md"),
}
# the tools whose work (training, timing, a rendering that keeps a fuller table) a refusal
# comes before: (their main, arguments, the file under OUT)
REFUSED = {
    "addition_collapse": (addition_collapse.main, ["--steps", "0", "--out", "OUT"], "README.md"),
    "bench": (bench.main, ["--out", "OUT"], "bench.json"),
    "step-vs-commit": (
        step_vs_commit.main,
        ["--base", "HEAD", "--out", "OUT"],
        "step_vs_commit.md",
    ),
    "cuda_session": (cuda_session.main, ["--out", "OUT", "--device", "cpu"], "session.json"),
    "results": (
        render.main,
        ["--records", "RECORDS", "--tables", "default", "--out", "OUT"],
        "tables/README.md",
    ),
}
TOOLS = {tool: (main, args, name) for tool, (main, args, name, _) in WRITTEN.items()} | REFUSED


@pytest.fixture
def records(tmp_path, monkeypatch) -> Path:
    """A records folder holding RECORD; the plans built from nothing (their writing is tried)."""
    folder = tmp_path / "records"
    (folder / "default").mkdir(parents=True)
    shutil.copy(RECORD, folder / "default" / RECORD.name)
    plan = {"profile": "long", "margins": {}, "cells": {}}
    headline = {"profile": "paper", "decision": {}, "cells": 0}
    monkeypatch.setattr(seed_plan, "build_plan", lambda records_dir: plan)
    monkeypatch.setattr(headline_plan, "build_plan", lambda records_dir: headline)
    monkeypatch.setattr(seed_plan, "readme", lambda p: PLAN_README)
    monkeypatch.setattr(headline_plan, "readme", lambda p: HEADLINE_README)
    return folder


def _run(tool: str, out: Path, records: Path) -> int:
    """The tool's exit status on `out` and `records` (a main that returns None: 0)."""
    main, args, _ = TOOLS[tool]
    argv = [a.replace("OUT", str(out)).replace("RECORDS", str(records)) for a in args]
    try:
        return main(argv) or 0
    except SystemExit as end:
        return end.code


def _out(tool: str, tmp_path: Path) -> tuple[Path, Path]:
    """(the --out, the file the tool writes there) under `tmp_path`."""
    name = TOOLS[tool][2]
    out = tmp_path / ("out.md" if not name else "out")
    return out, out / name if name else out


def _one_line(err: str, path: Path, why: str) -> None:
    """`err` is one line naming `path` and `why`."""
    assert err.count("\n") == 1 and str(path) in err and why in err, err


@pytest.mark.parametrize("tool", TOOLS)
def test_an_out_holding_a_run_record_is_refused_and_left_byte_for_byte(
    tool, records, tmp_path, capsys
):
    out, file = _out(tool, tmp_path)
    file.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(RECORD, file)
    assert _run(tool, out, records) == 2
    _one_line(capsys.readouterr().err, file, "an existing file this command did not write")
    assert file.read_bytes() == RECORD.read_bytes()


@pytest.mark.parametrize("tool", TOOLS)
def test_an_out_that_is_a_symbolic_link_or_a_folder_is_one_line(tool, records, tmp_path, capsys):
    out, file = _out(tool, tmp_path)
    file.parent.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "target.txt"
    target.write_text("precious\n")
    file.symlink_to(target)
    assert _run(tool, out, records) == 2
    _one_line(capsys.readouterr().err, file, "a symbolic link")
    assert target.read_text() == "precious\n"
    file.unlink()
    file.mkdir()
    assert _run(tool, out, records) == 2
    _one_line(capsys.readouterr().err, file, "a folder, not a file")


@pytest.mark.parametrize("tool", WRITTEN)
def test_a_new_out_is_written_and_the_tool_s_own_output_rewritten(tool, records, tmp_path):
    out, file = _out(tool, tmp_path)
    assert _run(tool, out, records) == 0
    assert file.stat().st_size > 0
    file.write_bytes(file.read_bytes() + b"edited\n")  # so that its rewriting shows
    assert _run(tool, out, records) == 0  # its own output: replaced
    assert not file.read_bytes().endswith(b"edited\n")
    committed = (REPO / "results" / WRITTEN[tool][3]).read_bytes()
    file.write_bytes(committed)
    assert _run(tool, out, records) == 0  # its committed output too
    assert file.read_bytes() != committed


def test_a_comparison_writes_nothing_in_a_records_folder_it_reads(records, capsys):
    record = records / "default" / RECORD.name
    for out in (record, records / "default" / "cmp.md", records / "cmp.md"):
        assert _run("compare", out, records) == 2
        _one_line(capsys.readouterr().err, out, f"inside the records folder {records}")
    assert record.read_bytes() == RECORD.read_bytes()
    assert sorted(p.name for p in records.rglob("*")) == ["default", RECORD.name]


def test_a_comparison_s_title_that_would_push_its_mark_too_far_is_refused_first(
    records, tmp_path, capsys, monkeypatch
):
    """The --title heads the page ahead of its mark: one that would push the mark past the
    first HEAD bytes is refused in one line naming --title and its longest, before anything is
    computed; the longest (in UTF-8 bytes) is written and replaced by the next run."""
    out = tmp_path / "cmp.md"
    args = [
        a.replace("RECORDS", str(records)).replace("OUT", str(out)) for a in TOOLS["compare"][1]
    ]
    longest = outputs.HEAD - len("# \n\n") - len(compare.OWN.holds[0])
    with monkeypatch.context() as patched:
        patched.setattr(compare, "cells", lambda *a: pytest.fail("computed before the refusal"))
        for title in ("T" * (longest + 1), "é" * (longest // 2 + 1)):
            assert compare.main([*args, f"--title={title}"]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "--title" in err and f"at most {longest}" in err, err
    assert not out.exists()
    for title in ("T" * longest, "é" * (longest // 2)):
        assert compare.main([*args, f"--title={title}"]) == 0
        assert compare.OWN.on(out.read_bytes())
        assert compare.main([*args, "--title=again"]) == 0  # its own page: replaced
        assert out.read_text().startswith("# again\n")


def test_a_comparison_s_title_that_is_not_one_printable_line_is_refused_first(
    records, tmp_path, capsys, monkeypatch
):
    """A --title holding a newline (its own headings and another tool's mark above compare's),
    or any other character that is not printable, is refused in one line naming --title and
    the character, before anything is computed; nothing is written."""
    out = tmp_path / "cmp.md"
    args = [
        a.replace("RECORDS", str(records)).replace("OUT", str(out)) for a in TOOLS["compare"][1]
    ]
    monkeypatch.setattr(compare, "cells", lambda *a: pytest.fail("computed before the refusal"))
    odd = ["x\n\nWritten by `python -m campaign.seed_plan`.\n# Other", "a\rb", "a\tb", "a\u2028b"]
    for title in [*odd, "a\u200eb", "a\x1bb", "a\u2029b"]:
        assert compare.main([*args, f"--title={title}"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--title" in err and "printable" in err, err
        assert ascii(next(c for c in title if not c.isprintable())) in err, err
    assert not out.exists()


def test_the_rendering_refuses_another_tool_s_page_at_its_name(records, tmp_path, capsys):
    """Any page naming a `python -m` command passed for a rendering's; a copy of
    the collapse search's page at tables/README.md was replaced."""
    out, file = _out("results", tmp_path)
    file.parent.mkdir(parents=True)
    for page in ("collapse_search/README.md", "recipe_search/digit_ceiling_search.md"):
        committed = (REPO / "results" / page).read_bytes()
        file.write_bytes(committed)
        assert _run("results", out, records) == 2
        _one_line(capsys.readouterr().err, file, "an existing file this command did not write")
        assert file.read_bytes() == committed


@pytest.mark.parametrize("page", ["README.md", "verdicts.md", "tnorms.md"])
def test_the_rendering_names_its_own_commands_whole(page):
    """`python -m campaign` is its command, `python -m campaign.<tool>` another's."""
    text = (REPO / "results" / "tables" / page).read_bytes()
    others = ("campaign.collapse_search", "campaign.recipe_search", "dfl_bench.results.compare")
    for other in others:
        swapped = text.replace(b"`python -m campaign", b"`python -m " + other.encode(), 1)
        assert swapped != text and not outputs.RENDERED[".md"].on(swapped)
    mine = text.replace(b"`python -m campaign", b"`python -m dfl_bench.results --force", 1)
    assert outputs.RENDERED[".md"].on(mine)


def test_a_text_without_its_own_mark_is_not_written(tmp_path):
    """What a command writes carries its mark, so its next run may replace it."""
    with pytest.raises(ValueError, match="lacks the mark"):
        outputs.write_text(tmp_path / "x.md", "no title\n", compare.OWN)
    assert not (tmp_path / "x.md").exists()


def test_a_plan_s_readme_is_its_words(tmp_path):
    """write_plan wrote the plan's JSON into README.md too (its words shadowed)."""
    seed_plan.write_plan(tmp_path, {"profile": "long", "margins": {}, "cells": {}}, PLAN_README)
    assert (tmp_path / "README.md").read_text() == PLAN_README


@pytest.mark.parametrize(
    ("tool", "mine", "other"),
    [("seed_plan", "seed_plan", "headline_plan"), ("headline_plan", "headline_plan", "seed_plan")],
)
def test_a_planner_refuses_the_other_planner_s_folder_and_rewrites_its_own(
    tool, mine, other, records, tmp_path, capsys
):
    """Any README naming `python -m ...` and any plan.json starting with "profile" passed for a
    seed plan's: `seed_plan plan --out results/headline_plan` replaced the headline plan."""
    out = tmp_path / "out"
    shutil.copytree(REPO / "results" / other, out)
    committed = {p.name: p.read_bytes() for p in out.iterdir()}
    assert _run(tool, out, records) == 2
    _one_line(capsys.readouterr().err, out, "an existing file this command did not write")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == committed
    shutil.rmtree(out)
    shutil.copytree(REPO / "results" / mine, out)
    assert _run(tool, out, records) == 0  # its own committed plan: replaced
    assert (out / "README.md").read_text() == {"seed_plan": PLAN_README}.get(tool, HEADLINE_README)


@pytest.mark.parametrize(
    ("tool", "doc"), [("time-families", "speed.md"), ("time-addition", "tasks.md")]
)
def test_a_timing_refuses_a_doc_that_names_its_command(tool, doc, records, tmp_path, capsys):
    """docs/speed.md and docs/tasks.md name `bench time-families` / `bench time-addition` near
    their top: the timings' marks were these phrases, so --out docs/<doc> replaced the doc."""
    out = tmp_path / doc
    shutil.copy(REPO / "docs" / doc, out)
    assert _run(tool, out, records) == 2
    _one_line(capsys.readouterr().err, out, "an existing file this command did not write")
    assert out.read_bytes() == (REPO / "docs" / doc).read_bytes()


@pytest.mark.parametrize(
    ("mark", "doc", "command"),
    [
        (family_timing.OWN, "speed.md", "python3 -m campaign.bench time-families"),
        (addition_timing.OWN, "tasks.md", "python -m campaign.bench time-addition"),
        (carry_gradients.OWN, "tasks.md", "python -m dfl_bench.theory.carry_gradients"),
    ],
)
def test_a_page_that_names_a_command_in_its_words_is_not_the_command_s_own(mark, doc, command):
    """A doc's paragraph that names the command (in backticks) under a title of its own, at its
    top: a page the command did not write (carry_gradients' mark was `python -m ...carry_gradients`
    anywhere near the top; the timings', `bench time-...`)."""
    text = (REPO / "docs" / doc).read_text()
    page = "# Notes\n\n" + text[text.index(f"`{command}`") :]
    assert not mark.on(page.encode())


# each writing tool's mark -> the committed files (patterns) that tool wrote: `make bench`,
# `make theory`, `make tables`, the searches and plans rewrite them (a figure or archive,
# outputs.PNG and outputs.GZIP, is its format's signature: a figure may replace a figure)
OWNED = {
    "compare": (compare.OWN, "results/*_comparison/README.md"),
    "carry_gradients": (carry_gradients.OWN, "results/theory/carry_gradients.md"),
    "time-addition": (addition_timing.OWN, "results/bench/addition_digits.md"),
    "time-families": (family_timing.OWN, "results/bench/families.md"),
    "recipe_search": (recipe_search.OWN, "results/recipe_search/*.md"),
    "collapse_search": (collapse_search.OWN, "results/collapse_search/README.md"),
    "final_nets": (final_nets.OWN, "results/final_nets/README.md"),
    "addition_budget": (addition_budget.OWN, "results/addition_budget/README.md"),
    "seed_plan plan.json": (seed_plan.PLAN_FILES["plan.json"], "results/seed_plan/plan.json"),
    "seed_plan README.md": (seed_plan.PLAN_FILES["README.md"], "results/seed_plan/README.md"),
    "headline_plan plan.json": (headline_plan.OWN["plan.json"], "results/headline_plan/plan.json"),
    "headline_plan README.md": (headline_plan.OWN["README.md"], "results/headline_plan/README.md"),
    "addition_collapse traces.json": (
        addition_collapse.OWN["traces.json"],
        "results/addition_collapse/traces.json",
        "results/addition_collapse/*/traces.json",
    ),
    "addition_collapse README.md": (
        addition_collapse.OWN["README.md"],
        "results/addition_collapse/README.md",
        "results/addition_collapse/*/README.md",
    ),
    "bench bench.json": (
        bench_report.OWN["bench.json"],
        "results/bench/bench.json",
        "results/bench/*/bench.json",
    ),
    "bench README.md": (
        bench_report.OWN["README.md"],
        "results/bench/README.md",
        *(f"results/bench/{machine}/README.md" for machine in ("cuda", "floor", "nets")),
    ),
    "step-vs-commit .json": (
        step_vs_commit.OWN["step_vs_commit.json"],
        "results/bench/step_vs_commit.json",
    ),
    "step-vs-commit .md": (
        step_vs_commit.OWN["step_vs_commit.md"],
        "results/bench/step_vs_commit.md",
    ),
    "cuda_session session.log": (
        cuda_session.OWN["session.log"],
        "results/bench/cuda/session/*.log",
    ),
    "cuda_session session.json": (
        cuda_session.OWN["session.json"],
        "results/bench/cuda/session/*.json",
    ),
    "cuda_session README.md": (
        cuda_session.OWN["README.md"],
        "results/bench/cuda/session/README.md",
    ),
    "theory fractions.csv": (theory_report.OWN["fractions.csv"], "results/theory/fractions.csv"),
    "theory gradient_ascent.csv": (
        theory_report.OWN["gradient_ascent.csv"],
        "results/theory/gradient_ascent.csv",
    ),
    "theory README.md": (theory_report.OWN["README.md"], "results/theory/README.md"),
    "family_theory families.csv": (
        family_theory.OWN["families.csv"],
        "results/theory/families/*.csv",
    ),
    "family_theory README.md": (
        family_theory.OWN["README.md"],
        "results/theory/families/README.md",
    ),
    "results .md": (outputs.RENDERED[".md"], "results/tables/*.md"),
    "results .tex": (outputs.RENDERED[".tex"], "results/tables/*.tex"),
}


@cache
def _committed_heads() -> dict[str, bytes]:
    """Each committed file under docs/ and results/ and README.md: its first HEAD bytes."""
    names = subprocess.run(
        ["git", "ls-files", "docs", "results", "README.md"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert len(names) > 1000
    return {n: (REPO / n).open("rb").read(outputs.HEAD) for n in names}


@pytest.mark.parametrize("tool", OWNED)
def test_a_tool_s_mark_is_on_its_committed_outputs_and_on_no_other_committed_file(tool):
    """A doc (docs/speed.md, docs/tasks.md) or another tool's output (results/headline_plan)
    carried a timing's or the seed plan's mark: its --out there replaced it."""
    mark, *mine = OWNED[tool]
    heads = _committed_heads()
    own = {n for n in heads if any(PurePosixPath(n).match(m) for m in mine)}
    assert own and {n for n, head in heads.items() if mark.on(head)} == own


def test_every_writing_tool_s_mark_is_checked_against_the_committed_files():
    """Each Mark a module that writes through outputs holds (but a format's signature) is
    OWNED's, so a new tool's mark is checked by the test above."""
    marks = set(outputs.RENDERED.values())
    for path in sorted([*REPO.glob("dfl_bench/**/*.py"), *REPO.glob("campaign/**/*.py")]):
        if "outputs." in path.read_text():
            module = importlib.import_module(".".join(path.relative_to(REPO).with_suffix("").parts))
            for value in vars(module).values():
                found = value.values() if isinstance(value, dict) else [value]
                marks |= {m for m in found if isinstance(m, outputs.Mark)}
    assert marks - {outputs.PNG, outputs.GZIP} == {mark for mark, *_ in OWNED.values()}


def test_every_committed_table_file_carries_the_rendering_s_mark():
    """`make tables` rewrites each of them (the mark names its commands only)."""
    tables = sorted((REPO / "results" / "tables").iterdir())
    assert len(tables) > 50
    assert all(outputs.RENDERED[p.suffix].on(p.read_bytes()) for p in tables)


def test_every_committed_figure_is_a_png_its_renderer_may_replace():
    figures = [*(REPO / "results" / "figures").glob("*.png")]
    figures += [*(REPO / "results" / "theory").rglob("*.png"), REPO / "results/bench/scaling.png"]
    figures += [REPO / "results" / "final_nets" / "seeds.png"]
    assert len(figures) > 40
    assert all(outputs.PNG.on(p.read_bytes()) for p in figures)
