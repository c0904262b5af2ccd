"""The package's layers (docs/architecture.md): a module imports only from its own layer and the
layers below it, so the results module reads records without the trainer above it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dfl_bench"
# bottom to top; the top-level modules (kinds, schema, paths, markdown) are pure, below all
LAYERS = ("", "operators", "logic", "tasks", "training", "lifecycle", "results", "reproduction")
ON_TOP = {"theory": 6, "bench": 8}  # beside results (theory), above everything (bench)


def layer(module: str) -> int | None:
    """The layer of `dfl_bench.<sub>...`; None for the entry point and non-package modules."""
    parts = module.split(".")
    if parts[0] != "dfl_bench":
        return None
    if len(parts) == 1 or parts[1] in ("__main__",):
        return None
    sub = parts[1] if (PACKAGE / parts[1]).is_dir() else ""
    return ON_TOP.get(sub, LAYERS.index(sub) if sub in LAYERS else None)


def imports(path: Path) -> set[str]:
    """The dfl_bench modules a file imports (at any depth of the file)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out |= {f"{node.module}.{a.name}" for a in node.names} | {node.module}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return {m for m in out if m.startswith("dfl_bench")}


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
