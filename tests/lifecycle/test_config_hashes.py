"""The config hash of every job of every experiment (and the default config) at profile quick is
pinned: refactoring the configs or the code that composes them must not change a record's hash.

Regenerate (only for a deliberate change of what a job computes):
    python -m tests.lifecycle.test_config_hashes
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dfl_bench.reproduction import plan
from dfl_bench.results import cell_configs

pytestmark = pytest.mark.slow  # composes every job of every experiment (half a minute)

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "config_hashes.json"


def current_hashes(records_dir: Path) -> dict[str, list[str]]:
    """{experiment: sorted config hashes of its jobs} at profile quick, one seed."""
    jobs = plan.plan(cell_configs.experiments(), "quick", 1, records_dir)
    hashes: dict[str, list[str]] = {name: [] for name in cell_configs.experiments()}
    for job in jobs:
        hashes[job.experiment].append(job.path.stem)
    return {name: sorted(values) for name, values in hashes.items()}


def test_every_jobs_config_hash_is_unchanged(tmp_path):
    assert current_hashes(tmp_path) == json.loads(FIXTURE.read_text())


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        FIXTURE.write_text(json.dumps(current_hashes(Path(tmp)), indent=1, sort_keys=True) + "\n")


def test_a_parameter_given_as_text_is_the_number_and_hashes_alike(tmp_path):
    from jobs import composed

    from dfl_bench.lifecycle import records, resolve

    def digest(*overrides: str) -> tuple[str, object]:
        cfg, _ = composed(tmp_path, *overrides)
        config = resolve.resolved_config(cfg)
        return records.config_hash(config), config["tnorm"]["p"]

    number, text = digest("tnorm=yager", "tnorm.p=2"), digest("tnorm=yager", "tnorm.p='2'")
    assert number == text and text[1] == 2
    assert digest("tnorm=yager", "tnorm.p=2.5")[0] != number[0]


def test_an_operator_a_row_names_inline_is_its_option_with_the_rows_settings(tmp_path):
    """A row's `{name: yager, p: 1.5}` has the option file's other settings (its `eps`), so it
    is the configuration `tnorm=yager tnorm.p=1.5` composes, with one hash."""
    from jobs import composed
    from omegaconf import OmegaConf

    from dfl_bench.lifecycle import records, resolve

    cfg, _ = composed(tmp_path, "tnorm=yager", "tnorm.p=1.5")
    grouped = resolve.resolved_config(cfg)
    inline = OmegaConf.merge(cfg, {"tnorm": None})
    inline.tnorm = {"name": "yager", "p": 1.5}
    rowed = resolve.resolved_config(inline)
    assert rowed["tnorm"] == grouped["tnorm"] == {"name": "yager", "p": 1.5, "eps": 0.0}
    assert records.config_hash(rowed) == records.config_hash(grouped)
    inline.tnorm = {"name": "yager", "p": 1.5, "eps": 1e-6}  # a row's own setting stays
    assert resolve.resolved_config(inline)["tnorm"]["eps"] == 1e-6
    inline.tnorm = {"name": "no_such", "p": 1.5}  # no option file: as the row says
    assert resolve.resolved_config(inline)["tnorm"] == {"name": "no_such", "p": 1.5}
