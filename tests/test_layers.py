"""The package's layers (docs/architecture.md): a module imports only from its own layer and the
layers below it, so the results module reads records without the trainer above it; this
repository's campaign (campaign/) sits on top, and nothing of the framework imports it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dfl_bench"
# bottom to top; the top-level modules (kinds, schema, paths, markdown) are pure, below all
LAYERS = ("", "operators", "logic", "tasks", "training", "lifecycle", "results", "reproduction")
ON_TOP = {"theory": 6}  # beside results


def layer(module: str) -> int | None:
    """The layer of `dfl_bench.<sub>...`; None for the entry point and non-package modules."""
    parts = module.split(".")
    if parts[0] != "dfl_bench":
        return None
    if len(parts) == 1 or parts[1] in ("__main__",):
        return None
    sub = parts[1] if (PACKAGE / parts[1]).is_dir() else ""
    return ON_TOP.get(sub, LAYERS.index(sub) if sub in LAYERS else None)


def imports(path: Path, package: str = "dfl_bench") -> set[str]:
    """The `package` modules a file imports (at any depth of the file)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out |= {f"{node.module}.{a.name}" for a in node.names} | {node.module}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return {m for m in out if m == package or m.startswith(f"{package}.")}


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = "dfl_bench." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        own = layer(module)
        if own is None:
            continue
        for imported in imports(path):
            other = layer(imported)
            if other is not None and other > own:
                upward.append(f"{module} -> {imported}")
    assert upward == []


GENERIC = ("training", "lifecycle")  # the layers that train any task
NEUTRAL = {
    "dfl_bench.tasks",
    "dfl_bench.tasks.contract",
    "dfl_bench.tasks.net_names",
    "dfl_bench.tasks.optim",
    "dfl_bench.tasks.optimizer_values",
    "dfl_bench.tasks.values",
}


def test_the_generic_layers_never_import_a_task():
    """training/, lifecycle/ and the task contract, registry, optimizer settings and group values
    reach a task only through the contract (a task is found by its yaml's `_target_`)."""
    generic = [p for sub in GENERIC for p in sorted((PACKAGE / sub).rglob("*.py"))]
    neutral = ("__init__.py", "contract.py", "net_names.py", "optim.py", "optimizer_values.py")
    neutral += ("values.py",)
    generic += [PACKAGE / "tasks" / name for name in neutral]
    found = []
    for path in generic:
        for imported in imports(path):
            parts = imported.split(".")
            module = ".".join(parts[:3])
            if parts[1:2] == ["tasks"] and len(parts) > 2 and module not in NEUTRAL:
                if imported.rsplit(".", 1)[0] in NEUTRAL:  # a name imported from a neutral one
                    continue
                found.append(f"{path.relative_to(PACKAGE)} -> {imported}")
    assert found == []


def test_the_framework_never_imports_the_campaign():
    """The seed plans, commit probes, machines, bench and the paper's report (its claims, their
    verdicts and the write-up: campaign/report/) are this repository's (campaign/): the
    framework and its launcher plugins run without them, by name or by a string imported."""
    framework = [*PACKAGE.rglob("*.py"), *(ROOT / "hydra_plugins").rglob("*.py")]
    found = [
        f"{path.relative_to(ROOT)} -> {imported}"
        for path in sorted(framework)
        for imported in imports(path, "campaign") | named_imports(path, "campaign")
    ]
    assert found == []
    assert not list(PACKAGE.rglob("claims/*.py"))  # the paper's claims: campaign/report/claims/


def test_the_campaigns_tests_live_with_the_campaign():
    """tests/results/ tests the framework's results; a test of a campaign module (a plan, a
    search, the probes, the machines) lives in tests/campaign/."""
    results_tests = sorted((ROOT / "tests" / "results").rglob("*.py"))
    found = [str(path.relative_to(ROOT)) for path in results_tests if imports(path, "campaign")]
    assert found == []


def named_imports(path: Path, package: str) -> set[str]:
    """The `package` modules a file imports by a string (`importlib.import_module`,
    `__import__`)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else None
            called = node.func.id if isinstance(node.func, ast.Name) else called
            name = node.args[0].value
            if called in ("import_module", "__import__") and isinstance(name, str):
                out.add(name)
    return {m for m in out if m == package or m.startswith(f"{package}.")}


@pytest.mark.slow
def test_an_experiment_renders_its_tables_with_no_campaign_there(tmp_path):
    """`python -m dfl_bench.results` with `campaign` not importable (as for a user of the
    framework alone): the tables, the index and the figures, no claim among them."""
    from tests.results.test_results import write

    records, out = tmp_path / "records", tmp_path / "out"
    write(records, "tnorms", "g", row="godel")
    code = (
        "import sys; sys.modules['campaign'] = None\n"  # any import of it fails
        "from dfl_bench.results.__main__ import main\n"
        "raise SystemExit(main(sys.argv[1:]))"
    )
    command = [sys.executable, "-c", code, f"--records={records}", f"--out={out}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ours n=1 (few)" in (out / "tables" / "tnorms.md").read_text()
    assert (out / "figures" / "tnorms_paper_vs_ours_quick.png").is_file()
    assert not (out / "tables" / "verdicts.md").exists()
    rendered = "".join(p.read_text() for p in (out / "tables").glob("*.md"))
    assert "| claim |" not in rendered and "claims ours" not in rendered  # no claim decided
    assert "The rules of every verdict" not in rendered


def test_no_module_is_over_500_lines():
    """Short modules with one job each: a module past 500 lines is split by what it does."""
    long = [
        f"{path.relative_to(ROOT)} ({n})"
        for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "campaign").rglob("*.py")])
        if (n := len(path.read_text().splitlines())) > 500
    ]
    assert long == []


def test_no_function_is_over_60_lines():
    """Each function of the framework and the campaign on one screen: a longer one is split into
    named steps."""
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
        for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "campaign").rglob("*.py")])
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > 60
    ]
    assert long == []


def test_no_two_modules_share_a_file_name():
    """A module's name says what it holds, once: dfl_bench/ and campaign/ have no two alike."""
    names = [
        path.name
        for path in [*PACKAGE.rglob("*.py"), *(ROOT / "campaign").rglob("*.py")]
        if path.name not in ("__init__.py", "__main__.py")
    ]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def floors(room: Path) -> int:
    """The floors of a package's import graph: the most modules on one chain of imports inside it
    (a module imported by none of its siblings' importers is floor 1)."""
    package = ".".join(room.relative_to(ROOT).parts)
    edges = {
        p.stem: {m.split(".")[2] for m in imports(p, package) if m.count(".") >= 2} - {p.stem}
        for p in room.glob("*.py")
    }

    def height(name: str) -> int:
        return 1 + max((height(below) for below in edges.get(name, ())), default=0)

    return max(height(name) for name in edges)


def test_the_results_room_stays_small():
    """What a user of the framework needs for any experiment, apart from this repository's
    verdicts (campaign/report/): at most 20 modules, 4,000 lines and 8 floors."""
    room = PACKAGE / "results"
    modules = sorted(room.glob("*.py"))
    lines = sum(len(p.read_text().splitlines()) for p in modules)
    assert (len(modules) <= 20, lines <= 4000, floors(room) <= 8) == (True, True, True), (
        len(modules),
        lines,
        floors(room),
    )
