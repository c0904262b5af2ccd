"""Speed benchmark of the training iteration, evaluation, full runs and sweeps (`make bench`).

`python -m campaign.bench` (`__main__`) runs the timed sections (sections.py on steps.py and
timing.py; runs.py for whole CLI runs), checks them against targets.py and writes
results/bench/ (bench_report.py, bench_plots.py); `python -m campaign.bench time-kb` times the
knowledge bases alone (kb_timing.py).
"""
