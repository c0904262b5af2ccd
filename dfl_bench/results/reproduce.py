"""An alias: `python -m dfl_bench.results.reproduce`, the name that committed plans, probes and
commit messages quote, runs `python -m dfl_bench.reproduction.reproduce`."""

import runpy

if __name__ == "__main__":
    runpy.run_module("dfl_bench.reproduction.reproduce", run_name="__main__", alter_sys=True)
