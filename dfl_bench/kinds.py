"""The operator kinds of a DFL configuration (one Hydra group each) and a knowledge base's loss
scales and quantifier scopes, importable without torch: the registry
(dfl_bench/operators/registry.py), the logic, the tasks' value checks and the results module
read them from here."""

KINDS = ("tnorm", "tconorm", "implication", "forall", "exists")
SCALES = ("mean", "sum")  # logic/kb.dfl_loss: a family's mean (the paper's code) or its sum
SCOPES = ("family", "formula")  # logic/compiler: one aggregation per family, or per formula
