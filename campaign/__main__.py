"""`python -m campaign` (= make tables): `python -m dfl_bench.results` with the same options and
the paper's report (campaign/report/): its claims under the tables, in the index, in
tables/verdicts.md and in the write-up's blocks."""

from campaign.report.paper_report import PaperReport
from dfl_bench.results.__main__ import main

raise SystemExit(main(report=PaperReport(), prog="python -m campaign"))
