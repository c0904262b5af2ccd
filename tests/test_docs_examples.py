"""The contributor guide's examples work as written: DEVELOPERS.md's knowledge base (its Python
and YAML blocks, as a contributor would add them) registers, composes and trains."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import warm_cli

REPO = Path(__file__).resolve().parent.parent


def guide_blocks(section: str) -> dict[str, str]:
    """The ```python and ```yaml blocks of a DEVELOPERS.md section."""
    text = (REPO / "DEVELOPERS.md").read_text()
    start = text.index(f"## {section}")
    body = text[start : text.index("\n## ", start + 3)]
    return {lang: code for lang, code in re.findall(r"```(python|yaml)\n(.*?)```", body, re.S)}


@pytest.mark.slow
def test_the_guides_knowledge_base_trains_as_written(tmp_path):
    blocks = guide_blocks("Adding a knowledge base")
    (tmp_path / "conf" / "kb").mkdir(parents=True)
    (tmp_path / "conf" / "kb" / "order.yaml").write_text(blocks["yaml"])
    (tmp_path / "my_kbs").mkdir()  # the guide's folder of one's own, named by the yaml's target
    (tmp_path / "my_kbs" / "__init__.py").write_text("")
    (tmp_path / "my_kbs" / "order_kb.py").write_text(blocks["python"])
    (tmp_path / "guide_driver.py").write_text(f"""
from jobs import composed
from dfl_bench.lifecycle import train
from dfl_bench.tasks.mnist.interpretation import kb_names, predicates

assert "order" not in kb_names()  # no import of the guide's module: its yaml's target does it
cfg, hydra_cfg = composed(
    __import__("pathlib").Path({str(tmp_path)!r}), "kb=order",
    "hydra.searchpath=[file://{tmp_path / "conf"}]",
)
record = train.run(cfg, hydra_cfg)
assert record["status"] == "ok" and record["config"]["kb"]["name"] == "order", record
assert predicates("order") == ("less",)
print("trained", record["cons_ratio"] is not None)
""")
    # the guide's folder of one's own is on PYTHONPATH: the working directory is no import path
    path = os.pathsep.join([str(tmp_path), str(REPO / "tests"), str(REPO)])
    env = {**os.environ, "PYTHONPATH": path, "WANDB_MODE": "disabled"}
    done = warm_cli.run([], tmp_path, env, module="guide_driver")  # `python -m guide_driver`
    assert done.returncode == 0, done.stderr[-3000:]
    assert "trained True" in done.stdout


def test_the_docs_read_no_inconclusive_difference_as_no_effect_and_no_best_as_the_number():
    """An interval holding 0 is inconclusive, not 'within noise'; the best of the evaluations
    (selected on the test set) is no number a verdict compares (the rules in force)."""
    text = " ".join((REPO / "docs" / "fidelity.md").read_text().split())
    assert "(Welch), within noise" not in text
    assert "the best is the number that compares with the paper's cells" not in text
