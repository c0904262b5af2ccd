"""The README's two commands set up a project environment of their own and never the machine's
Python: `make install` makes `.venv` and installs into it, every target runs its Python, and CI
runs the README's test command."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def dry_run(*args: str) -> str:
    """What `make -n ARGS` would run at the Makefile's own defaults: a `make test PYTHON=...` or
    `VENV=...` opt-out that runs this suite (its variables reach here through the environment
    and MAKEFLAGS) is not what these tests read."""
    opt_outs = ("PYTHON", "VENV", "PIP", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
    env = {k: v for k, v in os.environ.items() if k not in opt_outs}
    return subprocess.run(
        ["make", "-n", *args], cwd=REPO, capture_output=True, text=True, check=True, env=env
    ).stdout


def test_install_makes_the_environment_and_installs_only_into_it(tmp_path):
    env = tmp_path / "env"
    text = dry_run("install", f"VENV={env}")
    assert f'python3 -m venv "{env}"' in text
    pips = [line for line in text.splitlines() if " pip install" in line]
    assert len(pips) == 3 and all(line.startswith(f"{env}/bin/python -m pip") for line in pips)


def test_every_target_runs_the_projects_python():
    for target in ("train", "test", "tables"):
        text = dry_run(target)
        assert f"{REPO}/.venv/bin/python -m" in text, target
        assert not re.search(r"(^|\s)python3? -m (dfl_bench|pytest|campaign)", text), target


def test_ci_and_the_readme_run_the_same_commands():
    readme = (REPO / "README.md").read_text()
    assert "make install train\n" in readme and "make install test\n" in readme
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^make install test( 9>&-)?$", ci, re.M), "the README's test command, alone"
