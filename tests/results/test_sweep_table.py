"""The table a multirun ends with (dfl_bench/results/sweep_table.py), from committed records."""

from __future__ import annotations

from dfl_bench.paths import REPO_DIR
from dfl_bench.results.sweep_table import sweep_table

RECORDS = REPO_DIR / "results" / "records"


def test_a_paper_table_shows_each_recorded_row_beside_the_papers_numbers():
    text = sweep_table(RECORDS, "same_symmetric", "long")
    assert text.startswith("[dfl_bench] same_symmetric at profile long:")
    (product,) = [line for line in text.splitlines() if line.startswith("| T_P (S-implications)")]
    assert "(paper **96.5**)" in product and "nan" not in text
    assert "make tables RECORDS_DIR=" in text


def test_a_ratio_no_run_defines_shows_as_undefined_not_nan():
    text = sweep_table(RECORDS, "mnist_addition_digits", "long")
    (row,) = [line for line in text.splitlines() if line.startswith("| product_sum_n4 |")]
    assert "92.27 ± 0.88" in row and row.count("undef.") == 3 and "nan" not in row
    assert "(paper" not in text  # beyond the paper: no paper numbers


def test_no_records_or_no_experiment_is_one_line(tmp_path):
    assert sweep_table(tmp_path, "same_symmetric", "long").endswith("no records")
    assert "not an experiment" in sweep_table(RECORDS, "cli_test", "smoke")
