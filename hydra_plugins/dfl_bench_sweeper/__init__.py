"""dfl_bench's Hydra sweeper: the basic sweeper, every job checked before the first trains."""
