"""Orchestration: what trains the paper's tables, above the rendering of them (results/).

plan.py          every job of the chosen experiments, its record path, done or not, time left
reproduce.py     `make reproduce-tables`: run the missing jobs as Hydra multiruns, then render
seed_plan.py     the seeds that decide the open claims, planned and committed before they run
commit_probe.py  whether the commits of a cell train it alike (results/commit_probes*.json)
"""
