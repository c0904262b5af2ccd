"""The operator kinds of a DFL configuration (one Hydra group each), importable without torch:
the registry (dfl_bench/operators/registry.py) and the results module read them from here."""

KINDS = ("tnorm", "tconorm", "implication", "forall", "exists")
