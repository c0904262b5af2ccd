"""The paper's numbers (Section 10 and the appendix) from `paper_numbers.yaml`, its one stated
seed noise (the baseline's 95.18 ± 0.204, for its single-run numbers; our cells by their own
seeds: stats.py), and each experiment beyond the paper's rows (its sweep in conf/experiment/)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, OmegaConf

from dfl_bench.paths import CONFIG_DIR
from dfl_bench.schema import BEST_TEST_ACCURACY, CONS_RATIO, CU_ANT, CU_CONS, TEST_ACCURACY

DATA_FILE = Path(__file__).with_name("paper_numbers.yaml")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "conf" / "experiment"
COLUMNS = ("accuracy", "cons", CU_CONS, CU_ANT)
COLUMN_FIELDS = {  # accuracy: the final one, at the end of the budget (the primary number)
    "accuracy": TEST_ACCURACY,
    "cons": CONS_RATIO,
    CU_CONS: CU_CONS,
    CU_ANT: CU_ANT,
}
# The best of a run's test-set evaluations: selected on the test set (optimistic), shown beside
# the final accuracy and never deciding a verdict (the paper says only "accuracy on the test set").
SELECTED_ACCURACY = BEST_TEST_ACCURACY
DASH = "-"  # the paper's printed "-": an undefined ratio
Z = 2.0  # standard errors: a difference beyond Z * its standard error is not seed noise (~95%)
ORDERS = ("header", "swapped")  # a two-half table's halves as printed, or exchanged


def cell_key(value: Any) -> str | None:
    """A row's identity as text: numbers as `%g` (9.0 and 9 are one row), names unchanged."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{float(value):g}"
    return str(value)


@dataclass(frozen=True)
class PaperCell:
    """One printed cell group: a config row, its label, [acc %, cons, cu_cons, cu_ant]."""

    key: str | None
    label: str
    group: str
    kb: str | None  # the knowledge base of its group (main-text tables)
    values: dict[str, float | str | None]
    bold: tuple[str, ...] = ()
    source: str = "table"
    std: float | None = None

    def number(self, column: str) -> float | None:
        """The printed number of `column`; None for "-" or a blank."""
        value = self.values[column]
        return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class Published:
    """Another system's published number for a task setting beside a table beyond the paper
    (`published:` of its experiment yaml): final test accuracy (%), or None with the reason."""

    system: str
    setting: tuple[tuple[str, Any], ...]  # the task options it holds for, e.g. (("digits", 4),)
    accuracy: float | None
    source: str
    note: str = ""
    sd: float | None = None  # the sd over its own seeds, where it gives one
    net: str = ""  # its digit network: our `net` option of the same layers (e.g. lenet), or ""

    @classmethod
    def parse(cls, spec: Any, where: str, settings: dict[str, type] | None = None) -> Published:
        """One `published:` entry, checked (ValueError naming the file and the entry): a system,
        a source, the task setting it holds for (`task:`, a mapping of the task's settings, of
        `settings` name -> type where given), an accuracy in percent (a share in (0, 1] is
        refused: it reads as a fraction) with an optional sd, or else a note (e.g. time-out), and
        the digit network it trains where its code was read (`net:`, our option of its layers)."""
        known = {"system", "task", "accuracy", "sd", "source", "note", "net"}
        if not isinstance(spec, dict):
            raise ValueError(f"{where}: a published entry must be a mapping of {sorted(known)}: "
                             f"{spec!r}")  # fmt: skip
        if unknown := sorted(set(spec) - known):
            raise ValueError(f"{where}: published keys must be among {sorted(known)}: {unknown}")
        for key in ("system", "source"):
            if not isinstance(spec.get(key), str) or not spec[key].strip():
                raise ValueError(f"{where}: a published entry needs a `{key}` (text): {spec}")
        if "net" in spec and (not isinstance(spec["net"], str) or not spec["net"].strip()):
            raise ValueError(f"{where}: a published entry's `net` names a network (text): {spec}")
        task = spec.get("task")
        if not isinstance(task, dict) or not task:
            raise ValueError(
                f"{where}: a published entry needs `task:`, the setting it holds for "
                f"(e.g. {{digits: 4}}): {spec}"
            )
        for key, value in task.items():
            if settings is not None and key not in settings:
                raise ValueError(
                    f"{where}: published task setting {key!r} is not one of the task's "
                    f"{sorted(settings)}: {spec}"
                )
            wanted = (settings or {}).get(key)
            if wanted is not None and (isinstance(value, bool) or not isinstance(value, wanted)):
                raise ValueError(
                    f"{where}: published task.{key} must be {wanted.__name__}: {value!r} in {spec}"
                )
        accuracy = spec.get("accuracy")
        if accuracy is None and not spec.get("note"):
            raise ValueError(f"{where}: a published entry without accuracy needs a note: {spec}")
        if accuracy is not None and not (_is_number(accuracy) and 0 <= accuracy <= 100):
            raise ValueError(f"{where}: published accuracy must be a percentage: {accuracy!r}")
        if accuracy is not None and 0 < accuracy <= 1:
            raise ValueError(
                f"{where}: published accuracy {accuracy!r} reads as a fraction; give it in "
                f"percent ({100 * accuracy:g}): {spec}"
            )
        sd = spec.get("sd")
        if sd is not None and not (_is_number(sd) and 0 <= sd <= 100):
            raise ValueError(f"{where}: published sd must be a percentage: {sd!r}")
        return cls(
            system=str(spec["system"]),
            setting=tuple(sorted((spec.get("task") or {}).items())),
            accuracy=None if accuracy is None else float(accuracy),
            source=str(spec["source"]),
            note=str(spec.get("note", "")),
            sd=None if sd is None else float(sd),
            net=str(spec.get("net", "")),
        )


@dataclass(frozen=True)
class PaperTable:
    """One experiment's table (or figure, or text result) in the paper's layout."""

    experiment: str
    label: str | None
    where: str
    caption: str
    key: str | None
    groups: tuple[str, ...]
    rows: tuple[tuple[str, tuple[PaperCell, ...]], ...]
    group_labels: bool = False
    shared: dict[str, str] = field(default_factory=dict)
    notes: tuple[dict[str, Any], ...] = ()
    not_printed: str | None = None
    order: str = "header"  # the order its halves are compared in: ORDERS
    order_reason: str | None = None
    main: bool = False  # a main-text table (Sections 10.1-10.2, analysed in Section 10.3)
    beyond: bool = False  # an experiment beyond the paper: no paper numbers, rows vs `reference`
    reference: str | None = None  # the row the others are compared with (beyond the paper)
    references: tuple[str, ...] = ()  # the rows the write-up compares every row with (beyond)
    published: tuple[Published, ...] = ()  # other systems' numbers beside it (beyond)
    # The rows declared beside the published numbers (`headline: true`): row, its network and
    # its task setting (sorted items).
    headlines: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...] = ()
    # The references declared after their own rows' runs (`reference_after_runs: true`): a
    # choice of which row the others are read against, post hoc, said wherever it is used.
    post_hoc_references: tuple[str, ...] = ()

    def cells(self) -> list[PaperCell]:
        """Every cell that names a config row, left to right, top to bottom."""
        return [cell for _, cells in self.rows for cell in cells if cell.key is not None]

    def keys(self) -> list[str]:
        """The distinct config rows of the table, in the paper's order."""
        return list(dict.fromkeys(cell.key for cell in self.cells() if cell.key is not None))

    def in_order(self, order: str) -> PaperTable:
        """The table with its two halves' printed values in `order` (App. aggregators: "swapped"
        gives each row's left config the right half's numbers and vice versa)."""
        if order not in ORDERS:
            raise ValueError(f"table {self.experiment}: order must be one of {ORDERS}: {order!r}")
        if order == "header":
            return replace(self, order="header")
        if len(self.groups) != 2:
            raise ValueError(f"table {self.experiment}: only a two-half table can be swapped")
        rows = tuple(
            (label, (_numbers_of(left, right), _numbers_of(right, left)))
            for label, (left, right) in self.rows
        )
        return replace(self, rows=rows, order="swapped")

    def compared(self) -> PaperTable:
        """The table in the order the evidence supports (`order` of the data file)."""
        return self.in_order(self.order)


@dataclass(frozen=True)
class Paper:
    """All tables, the supervised baseline and the column names."""

    tables: dict[str, PaperTable]
    baseline: float
    baseline_std: float

    @property
    def main(self) -> tuple[str, ...]:
        """The main-text tables (`main: true` in the data file), in the paper's order."""
        return tuple(name for name, table in self.tables.items() if table.main)


@dataclass(frozen=True)
class Noise:
    """The seed standard deviation of one run's accuracy (points) and where it comes from."""

    sigma: float
    source: str

    def margin(self, n_a: int = 1, n_b: int = 1) -> float:
        """Z standard errors of the difference of two means over n_a and n_b seeds: beyond it a
        win is "much better", within it a tie."""
        return Z * self.sigma * math.sqrt(1 / n_a + 1 / n_b)


def paper_noise(baseline_std: float) -> Noise:
    """The paper's own seed spread: its supervised baseline's std (Section 10)."""
    return Noise(baseline_std, f"the paper's baseline std {baseline_std:g}")


def main_tables() -> tuple[str, ...]:
    """The main-text tables (paper_numbers.yaml's `main` flag), read on first use."""
    return load_paper().main


@cache
def load_paper(path: Path = DATA_FILE) -> Paper:
    """Parse the data file into `PaperTable`s (one per experiment of conf/experiment/)."""
    data = yaml.safe_load(path.read_text())
    if tuple(data["columns"]) != COLUMNS:
        raise ValueError(f"{path}: columns must be {list(COLUMNS)}")
    tables = {name: _table(name, spec) for name, spec in data["tables"].items()}
    for path in sorted(EXPERIMENTS.glob("*.yaml")):
        if path.stem not in tables:
            tables[path.stem] = beyond_paper(path)
    base = data["baseline"]
    return Paper(tables=tables, baseline=float(base["accuracy"]), baseline_std=float(base["std"]))


def _table(name: str, spec: dict[str, Any]) -> PaperTable:
    """One table of the data file."""
    groups = tuple(spec["groups"])
    kbs = spec.get("kbs") or [None] * len(groups)
    rows = []
    for row in spec["rows"]:
        cells = []
        for group, kb, cell in zip(groups, kbs, row["cells"], strict=True):
            values = dict(zip(COLUMNS, cell["values"], strict=True))
            bad = [v for v in values.values() if not (v is None or v == DASH or _is_number(v))]
            if bad:
                raise ValueError(f"table {name}: values must be numbers, '-' or null, got {bad}")
            cells.append(
                PaperCell(
                    key=cell_key(cell["row"]),
                    label=cell.get("tex", row["tex"]),
                    group=group,
                    kb=kb,
                    values=values,
                    bold=tuple(cell.get("bold", ())),
                    source=cell.get("source", "table"),
                    std=cell.get("std"),
                )
            )
        rows.append((row["tex"], tuple(cells)))
    compare = spec.get("compare") or {}
    if compare.get("order", "header") not in ORDERS:
        raise ValueError(f"table {name}: compare.order must be one of {ORDERS}")
    return PaperTable(
        experiment=name,
        label=spec.get("label"),
        where=spec["where"],
        caption=" ".join(spec["caption"].split()),
        key=spec.get("key"),
        groups=groups,
        rows=tuple(rows),
        group_labels=bool(spec.get("group_labels", False)),
        shared=dict(spec.get("shared") or {}),
        notes=tuple(spec.get("notes") or ()),
        not_printed=spec.get("not_printed"),
        order=compare.get("order", "header"),
        order_reason=" ".join((compare.get("reason") or "").split()) or None,
        main=bool(spec.get("main", False)),
    )


def beyond_paper(path: Path) -> PaperTable:
    """The table of an experiment the paper does not have: its rows are the values its sweep
    gives `row` (conf/experiment/<name>.yaml), its caption the file's first comment paragraph,
    no paper numbers; every row is compared with the first (the `reference`), and in the
    write-up with each row whose `rows` entry says `reference: true` (the first when none)."""
    text = path.read_text()
    spec = yaml.safe_load(text)
    headlines = headlines_of(spec)
    swept = str(spec["hydra"]["sweeper"]["params"]["row"]).split(",")
    comments = [line[1:].strip() for line in text.splitlines()[1:] if line.startswith("#")]
    caption = " ".join(line for line in comments if not line.startswith("python -m"))
    empty = dict.fromkeys(COLUMNS)
    rows = tuple(
        (row, (PaperCell(key=row, label=row, group="ours", kb=None, values=empty),))
        for row in (r.strip() for r in swept)
    )
    flagged = tuple(
        row for row, _ in rows if (spec.get("rows") or {}).get(row, {}).get("reference") is True
    )
    return PaperTable(
        experiment=path.stem,
        label=None,
        where="beyond the paper",
        caption=caption,
        key="row",
        groups=("ours",),
        rows=rows,
        beyond=True,
        reference=rows[0][0],
        references=flagged or (rows[0][0],),
        post_hoc_references=tuple(
            row for row in flagged if spec["rows"][row].get("reference_after_runs") is True
        ),
        published=published_of(spec, path.name, headlines),
        headlines=headlines,
    )


def _context(spec: dict[str, Any]) -> dict[str, Any]:
    """An experiment's own top-level tables a row's settings may interpolate (`stages`, `nets`,
    `stage`): its keys but the defaults list and Hydra's."""
    return {k: v for k, v in spec.items() if k not in ("defaults", "hydra")}


def rows_task_settings(spec: dict[str, Any], task: str) -> list[dict[str, Any]]:
    """The task settings each row of an experiment (`spec`, its yaml) trains: the task's yaml
    values under the experiment's `task:`, resolved for each row (OmegaConf only: nothing is
    composed or imported)."""
    from dfl_bench import tasks

    defaults = OmegaConf.load(tasks.TASK_DIR / f"{task}.yaml")
    out = []
    for row in spec.get("rows") or {None: None}:
        node = OmegaConf.create(
            {**_context(spec), "rows": spec.get("rows") or {}, "row": row,
             "task": spec.get("task") or {}}
        )  # fmt: skip
        merged = OmegaConf.merge({"task": defaults}, node)
        values = OmegaConf.to_container(merged.task, resolve=True)
        out.append({k: v for k, v in values.items() if k not in ("_target_", "name")})
    return out


def rows_nets(spec: dict[str, Any]) -> dict[str, str]:
    """The digit network (`net` option's name) each row of an experiment trains: the
    experiment's `net:` resolved for the row, else conf/config.yaml's default (OmegaConf only)."""
    default = next(
        str(d["net"])
        for d in OmegaConf.load(Path(CONFIG_DIR) / "config.yaml").defaults
        if isinstance(d, DictConfig) and "net" in d
    )
    out = {}
    for row in spec.get("rows") or {}:
        node = OmegaConf.create(
            {**_context(spec), "rows": spec["rows"], "row": row, "net": spec.get("net") or {}}
        )
        net = OmegaConf.to_container(node, resolve=True)["net"]
        out[row] = str(net.get("name", default)) if isinstance(net, dict) else default
    return out


def headlines_of(spec: dict[str, Any]) -> tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...]:
    """The rows an experiment declares beside the published numbers (`headline: true` in its
    `rows` entry), each with its digit network and task setting."""
    if not spec.get("published"):
        return ()
    nets, rows = rows_nets(spec), spec.get("rows") or {}
    settings = rows_task_settings(spec, _task_name(spec))
    return tuple(
        (row, nets[row], tuple(sorted(setting.items())))
        for (row, entry), setting in zip(rows.items(), settings, strict=True)
        if entry.get("headline") is True
    )


def _task_name(spec: dict[str, Any]) -> str:
    """The task an experiment overrides (`override /task` in its defaults), else the default."""
    from dfl_bench import tasks

    return next(
        (str(d["override /task"]) for d in spec.get("defaults") or []
         if isinstance(d, dict) and "override /task" in d),
        tasks.DEFAULT,
    )  # fmt: skip


def published_of(spec: dict[str, Any], where: str, headlines: tuple = ()) -> tuple[Published, ...]:
    """An experiment's `published:` list, each entry checked against its task's settings, no
    system named twice for one task setting, and each setting held by a row declared beside it
    (`headline: true`: `headlines`, else headlines_of): ours is never the row a test set picked."""
    from dfl_bench import tasks

    entries = spec.get("published") or []
    if not isinstance(entries, list):
        raise ValueError(f"{where}: `published:` must be a list of entries, got {entries!r}")
    name = _task_name(spec)
    out = [Published.parse(p, where, tasks.setting_types(name)) for p in entries]
    trained = rows_task_settings(spec, name) if out else []  # none to check without entries
    seen: set[tuple] = set()
    for p in out:
        if not any(all(row.get(k) == v for k, v in p.setting) for row in trained):
            shown = sorted({tuple(sorted(row.items())) for row in trained})
            raise ValueError(
                f"{where}: {p.system} is published for task {dict(p.setting)}, which no row of "
                f"this table trains (its rows: {[dict(s) for s in shown]})"
            )
        if (p.system, p.setting) in seen:
            raise ValueError(
                f"{where}: {p.system} is published twice for task {dict(p.setting)}: keep one"
            )
        seen.add((p.system, p.setting))
    declared = [dict(task) for _, _, task in headlines or headlines_of(spec)]
    for p in out:
        if not any(all(row.get(k) == v for k, v in p.setting) for row in declared):
            raise ValueError(
                f"{where}: no row declared beside {p.system}'s task {dict(p.setting)}: give the "
                f"row of that setting you compare `headline: true` in `rows:` (declared before "
                f"the runs, never the row with the highest test accuracy)"
            )
    return tuple(out)


def _numbers_of(cell: PaperCell, other: PaperCell) -> PaperCell:
    """`cell`'s config row carrying `other`'s printed numbers (values, bold, std)."""
    return replace(cell, values=dict(other.values), bold=other.bold, std=other.std)


def _is_number(value: Any) -> bool:
    """Whether a YAML value is a number (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool)
