"""Run records -> the paper's tables, agreement, claims, figures (`python -m dfl_bench.results`)."""

from dfl_bench.results.load import load_records
from dfl_bench.results.paper import load_paper

__all__ = ["load_paper", "load_records"]
