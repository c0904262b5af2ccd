"""Other libraries' private parts are reached in one module (dfl_bench/lifecycle/private_api.py),
each written for the version PINNED names: a test that fails when another is installed, so each
use is read again, and one that finds a private use anywhere else."""

from __future__ import annotations

import ast
from importlib.metadata import version
from pathlib import Path

from dfl_bench.lifecycle import private_api

ROOT = Path(__file__).resolve().parents[2]
PRIVATE_ATTRIBUTES = {"_wandb_init", "_delay_s", "_signal_connector"}


def test_each_private_use_is_written_for_the_installed_and_constrained_version():
    pins = dict(
        line.split("==")
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    for package, written_for in private_api.PINNED.items():
        assert pins[package] == written_for, f"constraints.txt pins {package} {pins[package]}"
        assert version(package) == written_for, (
            f"{package} {version(package)} is installed, private_api.py was written for "
            f"{written_for}: read each use of it there again, then update PINNED"
        )


def test_no_module_but_private_api_reaches_into_another_librarys_private_parts():
    found = []
    folders = ("dfl_bench", "hydra_plugins", "campaign")
    paths = [f for folder in folders for f in (ROOT / folder).rglob("*.py")]
    for path in paths:
        if path.name == "private_api.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(m and m.startswith("hydra._internal") for m in [module, *names]):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module or names}")
            if isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} reads .{node.attr}")
    assert found == []
