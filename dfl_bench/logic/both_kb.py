"""Both knowledge bases together: the paper's best run (98.0%, end of Section 10.2.4)."""

from __future__ import annotations

from dfl_bench.logic.kb_registry import union
from dfl_bench.logic.same_kb import same_kb
from dfl_bench.logic.sum9_kb import sum9_kb

both_kb = union("both", (same_kb, sum9_kb))
