"""This repository's reproduction campaign, on top of the framework (`dfl_bench` never imports it).

seed_plan.py      the seeds that decide the open claims, planned and committed before they run
headline_plan.py  the paper's +0.3 at its budget: the seeds a power calculation gives, its rule
headline.py       that rule (holds, fails, inconclusive), read by the plan and the write-up
power.py          the seeds a comparison needs (both plans' power calculation)
commit_probe.py   whether the commits of a cell train it alike (results/commit_probes_*.json)
machines.py       whether the machine a seed trained on moves a cell's accuracy
plan_report.py    how much of the seed plan the records hold, its claims' verdicts now
report/           the paper's claims decided and worded: tables, verdicts.md, the write-up
bench/            `make bench`: the speed benchmark, its targets and reports, the GPU session

`python -m campaign` renders the framework's tables (`python -m dfl_bench.results`, same
options) with the paper's report (report/); run it from the repository's root.
"""

import dfl_bench  # noqa: F401  first: it takes the working directory off sys.path (-m)
