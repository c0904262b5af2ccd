"""What an experiment declares is not the command line's to edit (dfl_bench/lifecycle/declared.py):
its rows, its stages and the values it takes from its stage, its rule, and the seeds of its
final stage are each refused in one line naming what to do instead, by the preflight and by each
job's check (the checked sweeper's too), while the searches' own command lines still pass."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jobs import composed
from omegaconf import OmegaConf

from dfl_bench.lifecycle import declared, preflight, sweep, train
from dfl_bench.lifecycle.file_overrides import leaves
from dfl_bench.lifecycle.guards import row_owner
from dfl_bench.paths import CONFIG_DIR

MINUTE = ("+experiment=mnist_addition_minute_search", "row=s2500_lr2e3")
CEILING = ("+experiment=digit_ceiling_search", "row=lenet_cos_1x")
BASELINE = ("+experiment=baseline", "row=ce_pair")


def from_row(line: str, experiment: str, owned: str, row: str) -> str:
    """The refusal of override `line`, which would set `owned` that `experiment`'s row sets."""
    return (
        f"{line} is refused: experiment {experiment!r} sets {owned} from its row (row={row}); "
        f"pick another row, or run without +experiment and set {owned} yourself"
    )


REFUSED = [
    (
        (*MINUTE, "stage=final", "task.validation=0.2"),
        "task.validation=0.2 is refused: experiment 'mnist_addition_minute_search' sets "
        "task.validation from its stage (stages: {'search': 0.2, 'final': 0.0}); pick a stage "
        "(stage=search or stage=final), or run without +experiment and set task.validation "
        "yourself",
    ),
    (
        (*CEILING, "data.validation=0.3"),
        "data.validation=0.3 is refused: experiment 'digit_ceiling_search' sets data.validation "
        "from its stage",
    ),
    (  # a mapping in place of the one holding the stage's value
        (*MINUTE, "stage=final", "task={digits: 1, validation: 0.2}"),
        "task={digits: 1, validation: 0.2} is refused: experiment 'mnist_addition_minute_search' "
        "sets task.validation from its stage",
    ),
    (
        (*CEILING, "stage=final", "data={labeled_fraction: 0.999, validation: 0.2}"),
        "data={labeled_fraction: 0.999, validation: 0.2} is refused: experiment "
        "'digit_ceiling_search' sets data.validation from its stage",
    ),
    (  # a mapping, or another option of a group, in place of the one holding the row's value
        (*MINUTE, "optimizer={name: adam, lr: 0.02, fused: true}"),
        from_row(
            "optimizer={name: adam, lr: 0.02, fused: true}",
            "mnist_addition_minute_search",
            "optimizer.lr",
            "s2500_lr2e3",
        ),
    ),
    (
        (*MINUTE, "optimizer=sgd"),
        from_row("optimizer=sgd", "mnist_addition_minute_search", "optimizer.lr", "s2500_lr2e3"),
    ),
    (
        (*MINUTE, "profile={max_steps: 4, eval_every: 4}"),
        from_row(
            "profile={max_steps: 4, eval_every: 4}",
            "mnist_addition_minute_search",
            "profile.max_steps",
            "s2500_lr2e3",
        ),
    ),
    (
        (*BASELINE, "kb={name: sum9, w_dfl: 0.0}"),
        from_row("kb={name: sum9, w_dfl: 0.0}", "baseline", "kb.name", "ce_pair"),
    ),
    ((*BASELINE, "kb=sum9"), from_row("kb=sum9", "baseline", "kb.name", "ce_pair")),
    (  # a row's value written `${oc.select:rows.${row}.K,default}`, set or deleted
        (*MINUTE, "optimizer.cosine_final=0.5"),
        from_row(
            "optimizer.cosine_final=0.5",
            "mnist_addition_minute_search",
            "optimizer.cosine_final",
            "s2500_lr2e3",
        ),
    ),
    (
        (MINUTE[0], "row=s2500_lr2e3_cos", "~optimizer.cosine_final"),
        from_row(
            "~optimizer.cosine_final",
            "mnist_addition_minute_search",
            "optimizer.cosine_final",
            "s2500_lr2e3_cos",
        ),
    ),
    (  # a deletion of the stage's value
        (*MINUTE, "stage=final", "~task.validation"),
        "~task.validation is refused: experiment 'mnist_addition_minute_search' sets "
        "task.validation from its stage",
    ),
    (
        (*CEILING, "augment.degrees=10"),
        from_row("augment.degrees=10", "digit_ceiling_search", "augment.degrees", "lenet_cos_1x"),
    ),
    (
        (*MINUTE, "stage=final", "stages.final=0.2"),
        "stages.final=0.2 is refused: experiment 'mnist_addition_minute_search' declares its "
        "stages; pick a stage (stage=search or stage=final), or run without +experiment",
    ),
    (
        (*MINUTE, "rows.s2500_lr2e3.lr=0.02"),
        "rows.s2500_lr2e3.lr=0.02 is refused: experiment 'mnist_addition_minute_search' "
        "declares its rows; pick another row (valid rows: ['s2000_lr3e3', 's2500_lr1e3', "
        "'s2500_lr2e3', 's2500_lr2e3_cos', 's2500_lr3e3_cos']), or run without +experiment",
    ),
    (
        (*MINUTE, "+rows.mine={net: paper, steps: 10, lr: 0.1}"),
        "+rows.mine={net: paper, steps: 10, lr: 0.1} is refused: experiment "
        "'mnist_addition_minute_search' declares its rows",
    ),
    (  # a table the rows read their values from: the row's own value, or `rows: ${families}`
        ("+experiment=operator_families", "row=frank_p10", "families.frank_p10.tnorm.p=5.0"),
        "families.frank_p10.tnorm.p=5.0 is refused: experiment 'operator_families' declares its "
        "families (its rows read their values from it); pick another row (valid rows: "
        "['product', 'yager_p1_5', 'hamacher_p0',",
    ),
    (
        ("+experiment=operator_families", "families=symmetric"),
        "families=symmetric is refused: experiment 'operator_families' declares its families",
    ),
    (
        ("+experiment=tnorms", "row=godel", "families.godel.tnorm.name=product"),
        "families.godel.tnorm.name=product is refused: experiment 'tnorms' declares its "
        "families (its rows read their values from it); pick another row (valid rows: "
        "['godel', 'product', 'lukasiewicz', 'yager_p1_5', 'yager_p2', 'yager_p20', "
        "'nilpotent']), or run without +experiment and set the values yourself",
    ),
    (
        (*CEILING, "nets.bn_wide.width=32"),
        "nets.bn_wide.width=32 is refused: experiment 'digit_ceiling_search' declares its nets "
        "(its rows read their values from it)",
    ),
    (
        (*MINUTE, "stage=final", "seed=3", "rule.final.seeds=[0,1,2,3,4]"),
        "rule.final.seeds=[0,1,2,3,4] is refused: experiment 'mnist_addition_minute_search' "
        "declares its rule; leave it out (the rule was declared before the runs)",
    ),
]
FINAL_SEED = (
    "seed=0 under stage=final: experiment 'mnist_addition_minute_search' declares its final "
    "seeds [3, 4, 5, 6, 7] (rule.final.seeds: its other seeds took part in the choice); pick "
    "one of them"
)


@pytest.mark.parametrize(("line", "said"), REFUSED)
def test_the_preflight_refuses_an_edit_of_what_the_experiment_declares(line, said):
    assert preflight.defect(list(line)).startswith(said)


@pytest.mark.parametrize(("line", "said"), REFUSED)
def test_each_job_refuses_an_edit_of_what_the_experiment_declares(line, said, tmp_path):
    cfg, hydra_cfg = composed(tmp_path, *line, own_budget=True)
    with pytest.raises(ValueError) as refused:
        train.checked(cfg, hydra_cfg.overrides.task)
    assert str(refused.value).startswith(said)


def test_a_final_stage_trains_only_its_declared_final_seeds(tmp_path):
    cfg, hydra_cfg = composed(tmp_path, *MINUTE, "stage=final", "seed=0", own_budget=True)
    with pytest.raises(ValueError) as refused:
        train.checked(cfg, hydra_cfg.overrides.task)
    assert str(refused.value) == FINAL_SEED
    cfg, hydra_cfg = composed(tmp_path, *CEILING, "stage=final", "seed=5", own_budget=True)
    with pytest.raises(ValueError, match=r"final seeds \[0, 1, 2, 3, 4\]"):
        train.checked(cfg, hydra_cfg.overrides.task)
    # the search stage trains any seed; a final seed at the final stage trains
    for line in [(*MINUTE, "seed=0"), (*MINUTE, "stage=final", "seed=7"), (*CEILING, "seed=9")]:
        cfg, hydra_cfg = composed(tmp_path, *line, own_budget=True)
        assert train.checked(cfg, hydra_cfg.overrides.task).config["seed"] == int(line[-1][5:])


def test_the_searches_final_command_lines_pass_and_a_used_seed_stops_the_sweep(tmp_path):
    """scripts/minute_search.sh and ceiling_search.sh's final stages, as the checked sweeper
    checks them before any job runs; a seed the choice used among them refuses the sweep."""
    rest = [f"records_dir={tmp_path}", "logger=none", "progress_bar=false", "threads=1"]
    minute = [*MINUTE, "stage=final", "seed=3,4,5,6,7", *rest]
    ceiling = [*CEILING, "stage=final", "seed=0,1,2,3,4", *rest]
    for line in (minute, ceiling):
        assert preflight.defect(line) is None
        assert sweep.invalid_jobs(sweep.expand(line)) == []
    (error,) = sweep.invalid_jobs(sweep.expand([*MINUTE, "stage=final", "seed=0,3", *rest]))
    assert error.endswith(FINAL_SEED)


def test_the_command_line_says_it_in_one_line_and_exits_2():
    done = subprocess.run(
        [sys.executable, "-m", "dfl_bench", *MINUTE, "rows.s2500_lr2e3.lr=0.02"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(
        "[dfl_bench] invalid configuration: rows.s2500_lr2e3.lr=0.02 is refused"
    )


def test_rows_that_are_a_table_whole_are_named_by_their_table():
    """`rows: ${families}` (tnorms): the valid rows are the families' names."""
    assert preflight.defect(["+experiment=tnorms", "rows.godel.tnorm.name=product"]) == (
        "rows.godel.tnorm.name=product is refused: experiment 'tnorms' declares its rows; pick "
        "another row (valid rows: ['godel', 'product', 'lukasiewicz', 'yager_p1_5', 'yager_p2', "
        "'yager_p20', 'nilpotent']), or run without +experiment and set the values yourself"
    )


def test_a_table_the_experiment_does_not_compose_in_is_not_said_to_be_its_own(tmp_path):
    """baseline composes no conf/families: `+families.*` is not refused as its declaration (it
    is neither read nor hashed there)."""
    cfg, hydra_cfg = composed(tmp_path, *BASELINE, "+families.mine.w_dfl=1")
    assert train.checked(cfg, hydra_cfg.overrides.task).config["row"] == "ce_pair"


def test_what_no_row_sets_stays_the_command_lines():
    """An option no row sets passes: another optimizer where the row sets none of its values,
    an optimizer's flag the row leaves alone, a budget where the rows set none."""
    for line in [
        (*BASELINE, "optimizer=sgd"),
        (*MINUTE, "optimizer.fused=false"),
        ("+experiment=mnist_addition", "profile=long"),
    ]:
        assert preflight.defect(list(line)) is None, line


KEYS = st.sampled_from("abc")
SPELLINGS = ["${rows[${row}].x}", "${oc.select:rows.${row}.x,0}", "${f[${rows[${row}].x}]}"]
TREES = st.recursive(
    st.sampled_from([1, "plain", "${other.x}", "${arrows.${row}}", *SPELLINGS]),
    lambda inner: st.dictionaries(KEYS, inner, min_size=1, max_size=3),
    max_leaves=8,
)


@given(tree=st.dictionaries(KEYS, TREES, min_size=1, max_size=3), key=st.lists(KEYS, min_size=1))
def test_a_key_is_the_rows_where_it_reaches_or_holds_a_value_taken_from_the_row(tree, key):
    """row_owner names a value taken from the row (either spelling) on the override's path, or
    the first below it; None where neither is."""
    taken = {path for path, value in leaves(tree, "") if any(s in str(value) for s in SPELLINGS)}
    dotted = ".".join(key)
    owned = row_owner(tree, dotted)
    on_path = [p for p in taken if dotted == p or dotted.startswith(f"{p}.")]
    below = [p for p in taken if p.startswith(f"{dotted}.")]
    assert owned in (on_path or below or [None])


def test_every_table_an_experiments_rows_read_is_declared():
    """Each table a value takes by its row (`${families[${rows[${row}].family}].tnorm}`) or that
    `rows` is whole (`rows: ${families}`), in every experiment, is one of declared.ROW_TABLES:
    an override of it would change what a row trains under the row's name."""
    read = re.compile(r"\$\{(\w+)\[\$\{rows[.\[]\$\{row\}")
    found: dict[str, str] = {}
    for path in sorted((Path(CONFIG_DIR) / "experiment").glob("*.yaml")):
        raw = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
        whole = re.fullmatch(r"\$\{(\w+)\}", str(raw.get("rows")))
        tables = [whole.group(1)] if whole else []
        tables += [t for _, value in leaves(raw, "") for t in read.findall(str(value))]
        found.update(dict.fromkeys(tables, path.stem))
    assert set(found) == {"families", "nets"}, found  # the scan finds what the yamls hold
    assert set(found) <= set(declared.ROW_TABLES) <= set(declared.DECLARED)
