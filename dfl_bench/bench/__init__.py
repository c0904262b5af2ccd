"""Speed benchmark of the training iteration, evaluation, full runs and sweeps (`make bench`).

Entry point: `python3 scripts/bench.py` (see `dfl_bench.bench.cli`); results in results/bench/.
"""
