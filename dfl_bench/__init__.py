"""dfl_bench: benchmarking differentiable fuzzy-logic operators (van Krieken et al.)."""

__version__ = "0.1.0"
