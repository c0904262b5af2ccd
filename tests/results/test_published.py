"""An experiment's `published:` list (other systems' numbers beside a table beyond the paper):
each entry checked, one line naming the file, never silently compared with the wrong row."""

from __future__ import annotations

from pathlib import Path

import pytest

from dfl_bench.results.paper import Published, published_of
from dfl_bench.results.render_beyond import _published_test
from dfl_bench.results.stats import Interval

ADDITION = {  # an experiment of MNIST addition whose rows train 4 and 15 digits
    "defaults": [{"override /task": "mnist_addition"}],
    "task": {"digits": "${rows[${row}].digits}"},
    "rows": {"n4": {"digits": 4, "headline": True}, "n15": {"digits": 15, "headline": True}},
}
REPO = Path(__file__).resolve().parents[2]
GOOD = {"system": "S", "task": {"digits": 4}, "accuracy": 92.7, "source": "a paper"}


def published_cell(published, ours) -> str:
    """One published number's cell alone (a block of one comparison: no correction)."""
    shown, test = _published_test(published, ours)
    return (
        f"{shown}: ours {test.text()} {test.word}" if isinstance(test, Interval) else shown + test
    )


def entries(*published) -> dict:
    return {**ADDITION, "published": list(published)}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({k: v for k, v in GOOD.items() if k != "task"}, "needs `task:`"),
        ({**GOOD, "task": 4}, "needs `task:`"),
        ({**GOOD, "task": {"digits": "4"}}, "task.digits must be int"),
        ({**GOOD, "task": {"digit": 4}}, "setting 'digit' is not one of the task's"),
        ({**GOOD, "accuracy": 0.927}, "reads as a fraction; give it in percent \\(92.7\\)"),
        ({**GOOD, "accuracy": "high"}, "must be a percentage"),
        ({**GOOD, "system": None}, "needs a `system`"),
        ({k: v for k, v in GOOD.items() if k != "source"}, "needs a `source`"),
        ("DeepStochLog 92.7", "must be a mapping"),
        ({**GOOD, "task": {"digits": -5}}, "for task {'digits': -5}, which no row of this table"),
        ({**GOOD, "task": {"digits": 100}}, "which no row of this table trains"),
    ],
)
def test_a_published_entry_that_would_be_read_wrong_is_refused_naming_the_file(entry, message):
    with pytest.raises(ValueError, match=rf"x\.yaml: .*{message}"):
        published_of(entries(entry), "x.yaml")


def test_a_published_setting_without_a_declared_row_is_refused():
    spec = {**entries(GOOD), "rows": {"n4": {"digits": 4}, "n15": {"digits": 15, "headline": True}}}
    with pytest.raises(ValueError, match=r"x\.yaml: no row declared beside S's task"):
        published_of(spec, "x.yaml")
    with pytest.raises(ValueError, match="`net` names a network"):
        published_of(entries({**GOOD, "net": ""}), "x.yaml")


def test_one_system_twice_for_one_task_is_refused():
    with pytest.raises(ValueError, match="S is published twice for task {'digits': 4}"):
        published_of(entries(GOOD, {**GOOD, "accuracy": 93.0}), "x.yaml")
    assert len(published_of(entries(GOOD, {**GOOD, "task": {"digits": 15}}), "x.yaml")) == 2


def test_a_note_and_an_sd_are_shown_beside_the_number():
    entry = Published.parse({**GOOD, "sd": 0.6, "note": "5 seeds"}, "x.yaml")
    assert published_cell(entry, None) == "92.7 ± 0.6 (5 seeds)"
    about = Published.parse({**GOOD, "note": "about"}, "x.yaml")
    assert published_cell(about, None) == "≈92.7"


def test_ours_beside_published_numbers_is_a_declared_row_never_a_hand_made_configuration(
    tmp_path,
):
    from dfl_bench.results.cells import build_table
    from dfl_bench.results.load import load_records
    from dfl_bench.results.render_beyond import published_markdown
    from tests.results.test_results import PAPER, REPO, write

    for seed in range(3):
        write(tmp_path, "mnist_addition_digits", "a", row="product_sum_n4", seed=seed,
              accuracy=0.90 + seed / 100)  # fmt: skip
        write(tmp_path, "mnist_addition_digits", "b", row="product_sum_n4", seed=seed,
              accuracy=0.99, extra_config={"data": {"batch_size": 64}})  # fmt: skip
        write(tmp_path, "mnist_addition_digits", "c", row="product_max_n4", seed=seed,
              accuracy=0.95)  # a higher row, not declared: never the one shown  # fmt: skip
    table = build_table(PAPER.tables["mnist_addition_digits"], load_records(tmp_path),
                        "quick", REPO)  # fmt: skip
    block = published_markdown(table)
    (digits4,) = [line for line in block if line.startswith("| digits=4 |")]
    assert "| product_sum_n4, paper (3) | 91.00 ± 1.00" in digits4
    assert "DeepStochLog (lenet)" in block[2] and "92.7 (another network)" in digits4
    (digits15,) = [line for line in block if line.startswith("| digits=15 |")]
    assert "| product_sum_n15, paper (0) | missing" in digits15


def test_a_lenet_row_is_like_for_like_and_another_network_is_labelled():
    import yaml

    from dfl_bench.results.paper import CONFIG_DIR, headlines_of

    path = f"{CONFIG_DIR}/experiment/mnist_addition_frontier_nets.yaml"
    heads = {row: net for row, net, _ in headlines_of(yaml.safe_load(open(path).read()))}
    assert heads == {
        **{f"bn_wide_n{n}": "bn_wide" for n in (4, 15, 100)},
        **{f"lenet_n{n}": "lenet" for n in (4, 15, 100)},
    }


def test_a_sum_tasks_split_noise_and_digit_prediction_are_each_runs_averaged():
    """Two runs on 250 test sums of one digit each side: the mean accuracy 0.5 read as one run's
    count (125 of 250), and each run's digit accuracy squared, averaged (not the mean squared)."""
    import pandas as pd

    from dfl_bench.results.render_beyond import _split_cells

    config = {"task": {"digits": 1}, "data": {"subset_test": 500}}
    own = pd.DataFrame(
        {"config": [config, config], "test_accuracy": [0.4, 0.6], "digit_accuracy": [0.9, 1.0]}
    )
    split, predicted = _split_cells(own)
    assert split == "250: [43.6, 56.4]"
    assert predicted == "90.50"  # (0.81 + 1.00) / 2, where the mean squared would give 90.25


def test_text_from_a_published_entry_is_shown_as_text():
    entry = Published.parse(
        {**GOOD, "accuracy": None, "note": "<img src=x onerror=alert(1)> | time-out"}, "x.yaml"
    )
    shown, _ = _published_test(entry, None)
    assert "<img" not in shown and "&lt;img" in shown and "\\|" in shown


def test_a_budget_chosen_on_the_test_set_decides_no_comparison_and_says_so():
    """The `minute` budget was chosen on the test accuracy of the records its table reports:
    its published comparison is shown, marked post hoc, and decided nothing."""
    from dfl_bench.results import cell_configs

    assert "minute" in cell_configs.POST_HOC_BUDGETS
    text = (REPO / "results/tables/mnist_addition.md").read_text()
    minute = text.split("## mnist_addition, profile `minute`")[1].split("\n## ")[0]
    assert "**Post hoc**" in minute
    published = [line for line in minute.splitlines() if line.startswith("| digits=1 |")]
    assert published and not any(
        word in published[0] for word in ("equivalent", "above", "below", "inconclusive")
    )


def test_a_reference_declared_after_its_runs_is_marked_post_hoc_where_it_is_used():
    """The 4- and 100-digit references were declared after their runs; the table,
    the write-up's block and the yaml say so, not one paragraph."""
    from dfl_bench.results.paper import load_paper

    table = load_paper().tables["mnist_addition_frontier_nets"]
    assert table.post_hoc_references == ("bn_wide_n4", "bn_wide_n100")
    rendered = (REPO / "results/tables/mnist_addition_frontier_nets.md").read_text()
    assert "**Post hoc**: `bn_wide_n4`, `bn_wide_n100` declared" in rendered
    readme = (REPO / "results/README.md").read_text()
    assert "against `bn_wide_n100` (post hoc: declared after its runs)" in readme


def test_a_table_beyond_the_paper_resolves_its_rows_settings_once_and_only_to_check_entries(
    monkeypatch,
):
    """Resolving each row's task setting is most of reading the paper (OmegaConf per row): an
    experiment with `published:` resolves them once for its headlines and once to check its
    entries, one without entries never (it has nothing to check them against)."""
    from dfl_bench.results import paper

    resolved = []
    real = paper.rows_task_settings
    monkeypatch.setattr(paper, "rows_task_settings", lambda *a: resolved.append(a) or real(*a))
    published = paper.beyond_paper(REPO / "conf" / "experiment" / "mnist_addition_digits.yaml")
    assert published.published and published.headlines and len(resolved) == 2
    resolved.clear()
    plain = paper.beyond_paper(REPO / "conf" / "experiment" / "operator_families.yaml")
    assert not plain.published and not plain.headlines and resolved == []
    assert published_of(ADDITION, "x.yaml") == ()  # no entries: none checked
