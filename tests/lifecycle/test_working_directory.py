"""No process an entry point starts imports from its working directory (dfl_bench/__init__.py):
not the `python -m dfl_bench` or `python -m campaign...` process itself, nor the interpreters it
starts (the parallel launcher's loky workers, subprocesses), however the package is reached."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLANTED = ("numpy", "pandas", "torch", "omegaconf", "hydra", "yaml", "argparse")


def hostile(folder: Path) -> Path:
    """`folder` holding packages named like libraries, each of which leaves a file (its pid in
    the name) in `folder/ran/` when imported; that folder."""
    ran = folder / "ran"
    ran.mkdir(parents=True)
    for name in PLANTED:
        (folder / name).mkdir()
        (folder / name / "__init__.py").write_text(
            f"import os\nopen(os.path.join({str(ran)!r}, {name!r} + str(os.getpid())), 'w')\n"
            "raise ImportError\n"
        )
    return ran


def run(command: list[str], cwd: Path, **paths: str) -> subprocess.CompletedProcess:
    """`command` run in `cwd` with this checkout (and `paths`) on PYTHONPATH, no PYTHONSAFEPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    path = os.pathsep.join([str(REPO), *paths.values()])
    return subprocess.run(
        command, cwd=cwd, env={**env, "PYTHONPATH": path}, capture_output=True, text=True
    )


def campaign_entry_points() -> list[str]:
    """The campaign modules run as `python -m`: those with a `__main__` block, and the packages
    with a `__main__.py`."""
    found = []
    for path in sorted((REPO / "campaign").rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts)
        if path.name == "__main__.py":
            found.append(module.removesuffix(".__main__"))
        elif re.search(r"^if __name__ == .__main__.:", path.read_text(), re.MULTILINE):
            found.append(module)
    return found


def test_the_campaign_entry_points_are_found():
    assert {"campaign", "campaign.bench", "campaign.seed_plan", "campaign.commit_probe"} <= set(
        campaign_entry_points()
    )


@pytest.mark.parametrize("module", campaign_entry_points())
def test_a_campaign_entry_point_imports_nothing_from_the_working_directory(module, tmp_path):
    """`python -m campaign...` imports dfl_bench only after `-m` is gone from sys.argv: the
    package's own import (campaign/__init__.py) takes the working directory off first."""
    ran = hostile(tmp_path)
    done = run([sys.executable, "-m", module, "--help"], tmp_path)
    assert not list(ran.iterdir()) and done.returncode == 0, done.stderr[-500:]


def test_a_module_outside_the_package_run_with_m_imports_nothing_from_the_working_directory(
    tmp_path,
):
    """A module run as `python -m` that imports dfl_bench once runpy has set sys.argv[0]."""
    ran = hostile(tmp_path / "cwd")
    tool = tmp_path / "tools"
    tool.mkdir()
    (tool / "tool.py").write_text("import dfl_bench\nimport numpy\n")
    done = run([sys.executable, "-m", "tool"], tmp_path / "cwd", tools=str(tool))
    assert done.returncode == 0 and not list(ran.iterdir()), done.stderr[-500:]


def test_an_interpreter_started_by_the_package_imports_nothing_from_the_working_directory(
    tmp_path,
):
    """`python -c` importing dfl_bench (then numpy), and a `python -c` it starts (as loky starts
    each worker; it imports pandas): PYTHONSAFEPATH keeps the working directory off its path."""
    ran = hostile(tmp_path)
    child = "subprocess.run([sys.executable, '-c', 'import pandas'], check=True)"
    parent = f"import dfl_bench, numpy, subprocess, sys; {child}"
    done = run([sys.executable, "-c", parent], tmp_path)
    assert done.returncode == 0 and not list(ran.iterdir()), done.stderr[-500:]


@pytest.mark.slow
def test_the_parallel_launchers_workers_import_nothing_from_the_working_directory(tmp_path):
    """A two-job multirun on the joblib launcher: its loky workers start as `python -c`."""
    ran = hostile(tmp_path)
    done = run(
        [
            *(sys.executable, "-m", "dfl_bench", "-m", "seed=0,1", "hydra/launcher=parallel"),
            *("profile=smoke", "logger=none", "progress_bar=false", "threads=null"),
            f"records_dir={tmp_path / 'records'}",
            f"checkpoint_dir={tmp_path / 'checkpoints'}",
            f"hydra.sweep.dir={tmp_path / 'sweep'}",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert len(list((tmp_path / "records").rglob("*.json"))) == 2 and not list(ran.iterdir())
