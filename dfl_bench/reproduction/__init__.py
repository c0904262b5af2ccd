"""Orchestration: what trains the paper's tables, above the rendering of them (results/).

plan.py          every job of the chosen experiments, its record path, done or not, time left
reproduce.py     `make reproduce-tables`: run the missing jobs as Hydra multiruns, then render
harvest.py       a background run's finished records into results/records
"""
