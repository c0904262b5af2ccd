"""Committed results name no path of the machine that made them (paths relative to the
repository), so they read the same on every clone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# A home or workspace folder, a Windows drive: what a machine-specific absolute path starts with.
MACHINE_PATH = re.compile(r"(?<![\w.])(/work/|/root/|/home/\w|/Users/\w|/private/|[A-Z]:\\\\)")


def test_no_committed_result_names_a_path_of_the_machine_that_made_it():
    files = subprocess.run(
        ["git", "ls-files", "results"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    texts = [f for f in files if f.endswith((".json", ".md", ".csv", ".tex", ".txt", ".yaml"))]
    assert len(texts) > 100
    found = {}
    for name in texts:
        match = MACHINE_PATH.search((REPO / name).read_text(errors="replace"))
        if match:
            found[name] = match.group(0)
    assert not found, found


def test_the_pattern_catches_machine_paths_and_leaves_relative_ones():
    assert MACHINE_PATH.search('"log_dir": "/work/main/outputs/x"')
    assert MACHINE_PATH.search("/home/alice/dfl_bench/results")
    assert not MACHINE_PATH.search('"log_dir": "outputs/default/2026/wandb"')
    assert not MACHINE_PATH.search("results/records/aggregation/x.json")
