"""`python3 -m dfl_bench.bench`: the speed benchmark (same as scripts/bench.py)."""

from dfl_bench.bench.cli import main

main()
