"""`python -m campaign` (= make tables): `python -m dfl_bench.results` with the same options,
then the campaign's blocks of the write-up (campaign/writeup.py)."""

from campaign import writeup
from dfl_bench.results.__main__ import main

raise SystemExit(main(extensions=[writeup.write], prog="python -m campaign"))
