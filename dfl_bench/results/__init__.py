"""Run records -> the paper's tables, agreement, figures (`python -m dfl_bench.results`), and a
report's decisions on them where one is passed (report.py).

`load_records` and `load_paper` are imported on first use, so the command line answers `--help`
without pandas or scipy."""

from typing import Any

__all__ = ["load_paper", "load_records"]


def __getattr__(name: str) -> Any:
    if name == "load_records":
        from dfl_bench.results.load import load_records

        return load_records
    if name == "load_paper":
        from dfl_bench.results.paper import load_paper

        return load_paper
    raise AttributeError(f"module 'dfl_bench.results' has no attribute {name!r}")
