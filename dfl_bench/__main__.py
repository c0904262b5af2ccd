"""`python -m dfl_bench`: the Hydra command line; `dfl_bench/lifecycle/train.py` says what a run
does."""

from dfl_bench.lifecycle.train import main

if __name__ == "__main__":
    main()
