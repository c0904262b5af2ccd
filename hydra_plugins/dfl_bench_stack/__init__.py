"""dfl_bench's Hydra launcher for many runs per process (`hydra/launcher=stack`)."""
