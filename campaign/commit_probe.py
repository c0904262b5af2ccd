"""Whether the commits of a cell train alike: the cell's configuration trained for a short probe
(PROBE: 100 steps, seed 0, one thread, the CPU) in a checkout of each of its commits, the numbers
compared to the bit. Results go to results/commit_probes.json, which the tables read: a cell
whose commits give the same probe numbers is no mixed-commit warning.

    python -m campaign.commit_probe [--records-dir results/records] [--limit N]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from campaign.child_env import child_env
from dfl_bench.lifecycle import migrate, origin, records
from dfl_bench.lifecycle.file_overrides import check_file_overrides, located
from dfl_bench.lifecycle.preflight import escaped
from dfl_bench.paths import CONFIG_DIR, REPO_DIR
from dfl_bench.reproduction.harvest import unsaid
from dfl_bench.results.probes import PROBE_STEPS, same, verdict, well_shaped
from dfl_bench.schema import METRIC_FIELDS, TASK_FIELDS
from dfl_bench.untrusted import PLAIN_NAME, UntrustedFile, read_json, unlinked, write_text

# fmt: off
PROBE = (
    "profile=quick", f"profile.max_steps={PROBE_STEPS}", f"profile.eval_every={PROBE_STEPS}",
    "profile.log_every=10", "seed=0", "threads=1", "logger=none", "progress_bar=false",
)  # no checkpoint_every: a job takes its budget's cadence (quick's 250: no checkpoint in 100)
# Override keys the probe sets itself (or leaves at their default: the CPU), never a record's.
OWN_KEYS = (
    "profile", "seed", "threads", "logger", "progress_bar", "records_dir", "checkpoint_dir",
    "force", "trainer",
)
# fmt: on
NUMBERS = (*METRIC_FIELDS, "pair_accuracy", "sum_accuracy", *TASK_FIELDS)
COMPLETE = ".extracted"  # written last in a commit's folder: it is whole
COMMIT_ID = re.compile(r"[0-9a-f]{40}")  # what a record's git_commit must be to be checked out
HISTORY = "this checkout's history (an ancestor of HEAD)"  # the only commits a probe runs


def shown(value: Any) -> str:
    """`value` as printed: no terminal escape or newline from a file reaches the terminal."""
    return escaped(str(value))


def unfit(record: Mapping[str, Any], path: Any) -> str | None:
    """Why a record's fields cannot name a cell to probe (its experiment or folder no plain name,
    its commit no commit id, its row no printable text), or None."""
    experiment, row = record.get("experiment"), record.get("row")
    for name in (experiment, Path(str(path)).parent.name):
        if not isinstance(name, str) or not PLAIN_NAME.fullmatch(name):
            return f"its experiment {shown(name)} is no plain name"
    commit = record.get("git_commit")
    if not isinstance(commit, str) or not PLAIN_NAME.fullmatch(commit):
        return f"its git_commit {shown(commit)} is no commit id"  # known_commit checks it more
    if isinstance(row, str) and not row.isprintable():
        return f"its row {shown(row)} is no printable text"
    return None


def override_mismatch(
    overrides: Sequence[str], config: Mapping[str, Any], conf_dir: str = CONFIG_DIR
) -> str | None:
    """Which of a record's overrides (but the probe's own keys) its `config` does not say it ran
    with (harvest.unsaid), `key=value, the record's other` for each, or None: the probe would
    train another configuration under its cell."""
    differ = unsaid(list(overrides), dict(config), conf_dir, skip=OWN_KEYS)
    return "; ".join(differ) or None


PROFILE_KEYS = ("data.subset_train", "data.subset_test")  # set by the probe's budget, by design


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """A config's leaves by dotted key."""
    if isinstance(value, Mapping) and value:
        pairs = (_flat(inner, f"{prefix}{key}.").items() for key, inner in value.items())
        return {k: v for leaves in pairs for k, v in leaves}
    return {prefix.rstrip("."): value}


def unreproduced(recorded: Mapping[str, Any], trained: Mapping[str, Any]) -> list[str]:
    """The dotted keys at which the config a probe trained (`trained`, as its commit wrote it)
    differs from its record's (`recorded`), both in today's form (migrate) and as hashed
    (records.hashed_config), but for the probe's own keys (OWN_KEYS, PROFILE_KEYS, and the
    optimizer settings its budget overlays: profile.optimizer); [] when they hash alike."""
    profile = trained.get("profile")
    overlay = profile.get("optimizer") if isinstance(profile, Mapping) else None
    overlaid = overlay if isinstance(overlay, Mapping) else {}
    ignored = {*PROFILE_KEYS, *(f"optimizer.{k}" for k in overlaid)}

    def kept(config: Mapping[str, Any]) -> dict[str, Any]:
        today = migrate.migrate_config(config)
        out = records.hashed_config({k: v for k, v in today.items() if k not in OWN_KEYS})
        return {k: v for k, v in _flat(records.numbers_as_floats(out)).items() if k not in ignored}

    try:
        mine, theirs = kept(recorded), kept(trained)
    except (TypeError, ValueError, AttributeError, KeyError) as err:
        return [f"(its config cannot be compared: {type(err).__name__})"]
    if mine == theirs:
        return []
    keys = mine.keys() | theirs.keys()
    return sorted(k for k in keys if mine.get(k, KeyError) != theirs.get(k, KeyError))


def probe_overrides(overrides: Sequence[str], conf_dir: str = CONFIG_DIR) -> list[str]:
    """A record's overrides (in its commit's own vocabulary: `conf_dir` is that commit's conf/)
    with the probe's budget instead of its profile, seed, threads, logging and folders; each a
    plain config override (lifecycle/file_overrides.py: a record is an untrusted file), else a
    ValueError."""
    if not isinstance(overrides, list):
        raise ValueError(f"the record's overrides are a {type(overrides).__name__}, not a list")
    overrides = check_file_overrides(located(overrides), "the record", conf_dir)
    kept = [o for o in overrides if o.lstrip("+~").split("=")[0].split(".")[0] not in OWN_KEYS]
    return [*kept, *PROBE]


def cells_to_probe(records_dir: Path) -> dict[str, dict[str, Any]]:
    """Each configuration whose ok runs (their own records, not reused copies) come from more
    than one commit: its experiment and row, and per commit the overrides of its first run."""
    from dfl_bench.results.load import load_records

    with warnings.catch_warnings(record=True) as skipped:
        warnings.simplefilter("always")
        frame = load_records(records_dir)
    for warning in skipped:  # a record the loader left out, named escaped
        print(f"[commit_probe] skipped: {shown(warning.message)}", file=sys.stderr)
    own = frame[(frame["status"] == "ok") & frame["reused_from"].isna()]
    fit = []
    for _, record in own.iterrows():
        why = unfit(record, record["path"])
        if why is not None:
            print(f"[commit_probe] skipped {shown(record['path'])}: {why}", file=sys.stderr)
        fit.append(why is None)
    out: dict[str, dict[str, Any]] = {}
    for digest, group in own.loc[own.index[fit]].groupby("configuration"):
        if group["git_commit"].nunique() < 2:
            continue
        commits: dict[str, list[str]] = {}
        configs: dict[str, Any] = {}
        for _, record in group.sort_values("seed").iterrows():
            whole = read_json(record["path"])
            commits.setdefault(str(record["git_commit"]), whole.get("overrides"))
            configs.setdefault(str(record["git_commit"]), whole.get("config"))
        row = group["row"].iloc[0]
        out[str(digest)] = {
            "experiment": str(group["experiment"].iloc[0]),
            "row": None if not isinstance(row, str) else row,
            "commits": commits,
            "configs": configs,
        }
    return out


def known_commit(commit: str) -> str | None:
    """Why a record's `git_commit` cannot be checked out (not a full hex commit id, one this
    repository does not know, or one outside this checkout's history: an unreachable object, a
    fetched pull request's head, a stash), or None: a record is a file that arrives in a pull
    request, so its commit never becomes a path, a git option or code run unchecked."""
    if not isinstance(commit, str) or not COMMIT_ID.fullmatch(commit):
        return f"git_commit {commit!r} is not a full hex commit id"
    if not _git_holds("cat-file", "-e", f"{commit}^{{commit}}"):
        return f"commit {commit} is not in this repository"
    ours = _git_holds("merge-base", "--is-ancestor", commit, "HEAD")
    return None if ours else f"commit {commit} is not in {HISTORY}: not probed"


def _git_holds(*args: str) -> bool:
    """Whether a git query (cat-file -e, merge-base --is-ancestor) holds in this checkout."""
    return subprocess.run(["git", *args], cwd=REPO_DIR, capture_output=True).returncode == 0


_EXTRACTED: dict[str, Path] = {}  # commit -> its files, extracted by this process


def checkout(commit: str) -> Path:
    """The commit's tracked files (git archive), extracted by this process into a folder of its
    own (a fresh private temporary folder, removed at exit): nothing found on disk is run as a
    commit's code (a cache folder edited, cut off or planted, or a link to elsewhere, would run
    its code and have the probe call two commits alike). ValueError for a commit `known_commit`
    refuses."""
    why = known_commit(commit)
    if why is not None:
        raise ValueError(why)
    if commit in _EXTRACTED and (_EXTRACTED[commit] / COMPLETE).is_file():
        return _EXTRACTED[commit]
    root = Path(tempfile.mkdtemp(prefix=f"dfl_bench_commit_{commit[:12]}_"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    archive = subprocess.run(
        ["git", "archive", commit], cwd=REPO_DIR, capture_output=True, check=True
    )
    folder = root / commit
    folder.mkdir()
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    write_text(folder / COMPLETE, commit + "\n")
    _EXTRACTED[commit] = folder
    return folder


def probe(commit: str, overrides: Sequence[str]) -> dict[str, Any]:
    """The probe's numbers at `commit` (or the reason it has none)."""
    if overrides is None:
        return {"error": "the record names no overrides"}
    if str(commit).endswith("-dirty"):
        return {"error": "a dirty tree: the commit is not what trained"}
    why = known_commit(commit)
    if why is not None:  # skipped, as every cell it cannot probe: nothing extracted or run
        print(f"[commit_probe] skipped: {shown(why)}", file=sys.stderr)
        return {"error": why}
    try:
        args = probe_overrides(overrides, str(checkout(commit) / "conf"))
    except ValueError as err:
        return {"error": str(err)}
    code = [str(checkout(commit)), *filter(None, [os.environ.get("PYTHONPATH")])]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "dfl_bench",
                    *args,
                    f"records_dir={tmp}/records",
                    f"checkpoint_dir={tmp}/checkpoints",
                    f"hydra.run.dir={tmp}/out",
                ],
                cwd=checkout(commit),
                env=child_env(code),  # no working directory on the path, no caller's secret
                capture_output=True,
                text=True,
                timeout=1800,
            )
        except (subprocess.SubprocessError, OSError) as err:
            return {"overrides": args, "error": f"{type(err).__name__}: {err}"}
        found = sorted(Path(tmp, "records").rglob("*.json"))
        if done.returncode != 0 or len(found) != 1:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            return {"overrides": args, "error": f"exit {done.returncode}: {tail[0]}"}
        record = read_json(found[0])
    if record.get("status") != "ok":
        return {"overrides": args, "error": f"probe run failed: {record.get('reason')}"}
    if not isinstance(record.get("config"), dict):
        return {"overrides": args, "error": "the probe's record holds no config"}
    numbers = {k: record[k] for k in NUMBERS if k in record}
    # the config it trained, for probe_missing to hold against the record's (never written)
    return {"overrides": args, "numbers": numbers, "config": record["config"]}


def machine() -> dict[str, str]:
    """What bit-exactness depends on: the torch build and the CPU, its model too (an Intel Xeon
    trains the probes of symmetric_aggregators/nilpotent_log_product and sigmoidal_b0/b0=-0.65
    to other numbers than the machine of results/commit_probes.json, both AVX512 to torch). A
    file made before it named the model is another machine's for every machine now."""
    here = origin.machine()
    return {
        "torch": here["torch"],
        "cpu_capability": here["cpu_capability"],
        "cpu": here["cpu"],
        "machine": here["platform"],
    }


def machine_file(here: Mapping[str, str]) -> str:
    """This machine's probe file, named by its CPU model and capability
    (`results/commit_probes_<model>_<capability>.json`).

    >>> machine_file({"cpu": "Intel(R) Xeon(R) Processor", "cpu_capability": "AVX512"})
    'results/commit_probes_intel_xeon_avx512.json'
    """
    model = re.sub(
        r"\((r|tm)\)|\b(processor|cpu)\b", " ", f"{here['cpu']} {here['cpu_capability']}".lower()
    )
    return f"results/commit_probes_{re.sub(r'[^a-z0-9]+', '_', model).strip('_')}.json"


def _prune(cell: Mapping[str, Any], wanted: Mapping[str, Any]) -> dict[str, Any]:
    """A probed `cell` with only the probes of the commits its records name now (`wanted`, of
    `cells_to_probe`) and their verdict."""
    kept = {c: e for c, e in cell.get("commits", {}).items() if c in wanted["commits"]}
    return {
        "experiment": wanted["experiment"],
        "row": wanted["row"],
        "commits": kept,
        "same": same(kept),
    }


class OtherMachine(RuntimeError):
    """The probes file was made on another torch build or CPU (it is left as it is)."""


class WouldDrop(RuntimeError):
    """The records no longer mix commits in some of the file's cells: dropping them is asked
    for (`prune`), never done on the way (an empty or wrong records folder would empty it)."""


def own_file(out: Path, here: Mapping[str, str]) -> dict[str, Any]:
    """The probe file `out` (empty where there is none); OtherMachine when it was made on
    another torch build or CPU than `here`'s (UntrustedFile where `out` is a link or no name of
    this system, `unlinked`)."""
    known = read_json(out) if unlinked(out).is_file() else {}
    if not well_shaped(known.get("cells", {})):
        raise UntrustedFile(out, "its cells are no mapping of configurations to their probes")
    if known and known.get("machine") != here:
        raise OtherMachine(
            f"{out} holds probes made on {known.get('machine')}; this machine is {here}, and "
            "probes compare to the bit only on one machine: nothing changed. Probe here into "
            "another file (--out), or on that machine."
        )
    return known


def chosen_cells(
    records_dir: Path, only: Sequence[str], undecided: bool, repo: Path
) -> dict[str, Any]:
    """The cells to probe (`cells_to_probe`), only the configurations `only` names (digest
    prefixes) and, with `undecided`, only those no committed probe file under `repo` decides."""
    wanted = cells_to_probe(records_dir)
    if only:
        wanted = {d: c for d, c in wanted.items() if any(d.startswith(o) for o in only)}
    if undecided:
        wanted = {d: c for d, c in wanted.items() if verdict(repo, d, list(c["commits"])) is None}
    return wanted


def kept_cells(known: Mapping[str, Any], wanted: Mapping[str, Any], others: bool) -> dict[str, Any]:
    """The file's cells `wanted` still names, each with the probes of its commits now
    (`_prune`); with `others`, the cells not chosen this time stay as they are too."""
    held = known.get("cells", {})
    kept = {d: c for d, c in held.items() if d not in wanted} if others else {}
    return kept | {d: _prune(cell, wanted[d]) for d, cell in held.items() if d in wanted}


def check_dropped(
    dropped: Sequence[str], before: int, out: Path, records_dir: Path, prune: bool
) -> None:
    """WouldDrop when cells are `dropped` without `prune`; with it, their names on stderr."""
    if dropped and not prune:
        raise WouldDrop(
            f"{out}: the records under {records_dir} no longer mix commits in {len(dropped)} of "
            f"its {before} cell(s) ({', '.join(d[:10] for d in dropped[:5])}): nothing "
            "changed; --prune drops them"
        )
    if dropped:  # never less than it had without a word
        print(
            f"[commit_probe] {out} drops {len(dropped)} cell(s) the records under {records_dir} "
            f"no longer mix commits in: {', '.join(d[:10] for d in dropped)}",
            file=sys.stderr,
        )


def write_probes(out: Path, known: Mapping[str, Any]) -> None:
    """The probe file, keys sorted (through no symbolic link: UntrustedFile)."""
    text = json.dumps(records.strict(known), indent=1, sort_keys=True, allow_nan=False)
    write_text(out, text + "\n")


UNREPRODUCED = "the probe trained another configuration than its record's"


def _conf_dir(commit: str) -> str:
    """The conf/ a record's overrides are read in: its commit's, else (no such commit here)
    today's."""
    if known_commit(commit) is not None:
        return CONFIG_DIR
    try:
        return str(checkout(commit) / "conf")
    except (subprocess.SubprocessError, OSError):
        return CONFIG_DIR


def _checked(result: dict[str, Any], recorded: Mapping[str, Any]) -> dict[str, Any]:
    """A probe's `result` without the config it trained, which must be its record's
    (`unreproduced`): else an error naming the keys that differ, its numbers dropped (the probe
    trained another configuration than the cell's; it decides nothing)."""
    result = dict(result)
    trained = result.pop("config", None)
    if "numbers" not in result or not isinstance(trained, Mapping):
        return result
    differ = unreproduced(recorded, trained)
    if not differ:
        return result
    keys = ", ".join(shown(k) for k in differ[:8]) + (", ..." if len(differ) > 8 else "")
    return {"overrides": result.get("overrides"), "error": f"{UNREPRODUCED}: {keys}"}


def probe_missing(
    known: dict[str, Any], wanted: Mapping[str, Any], out: Path, limit: int | None
) -> None:
    """Probe each wanted (configuration, commit) the file lacks, at most `limit`, writing the
    file after each probe."""
    cells = known["cells"]
    todo = [
        (digest, commit, overrides)
        for digest, cell in wanted.items()
        for commit, overrides in cell["commits"].items()
        if commit not in cells.get(digest, {}).get("commits", {})
    ]
    for i, (digest, commit, overrides) in enumerate(todo[:limit]):
        cell = cells.setdefault(digest, {k: wanted[digest][k] for k in ("experiment", "row")})
        name = f"{shown(cell['experiment'])}/{shown(cell['row'])} at {shown(commit[:10])}"
        print(f"[commit_probe] {i + 1}/{len(todo)} {name}", flush=True)
        config = wanted[digest].get("configs", {}).get(commit)
        config = config if isinstance(config, dict) else {}
        why = override_mismatch(overrides or [], config, _conf_dir(commit))
        if why is not None:  # it would train another configuration under this cell
            why = f"its overrides do not give its record's configuration: {why}"
            print(f"[commit_probe] refused {name} ({digest[:10]}): {why}", file=sys.stderr)
            cell.setdefault("commits", {})[commit] = {"error": why}
        else:
            cell.setdefault("commits", {})[commit] = _checked(probe(commit, overrides), config)
            error = cell["commits"][commit].get("error", "")
            if error.startswith(UNREPRODUCED):
                print(f"[commit_probe] undecided {name} ({digest[:10]}): {error}", file=sys.stderr)
        cell["same"] = same(cell["commits"])
        write_probes(out, known)


def run(
    records_dir: Path,
    out: Path,
    limit: int | None = None,
    only: Sequence[str] = (),
    undecided: bool = False,
    repo: Path = REPO_DIR,
    prune: bool = False,
) -> dict[str, Any]:
    """Probe every (configuration, commit) of `cells_to_probe` not yet in `out`, writing `out`
    after each probe (resumable). A commit no record of its cell names any more (a retrained
    seed), and a cell now of one commit, are dropped. A file made on another torch build or CPU
    is never touched (OtherMachine): its probes are that machine's. Cells the records no longer
    mix commits in are dropped only with `prune` (else WouldDrop, nothing written). `only`: probe
    just these configurations (digest prefixes); `undecided`: just those whose commits no
    committed probe file under `repo` (any machine's) decides yet; the other cells of `out` stay
    then."""
    here = machine()
    known = own_file(out, here)
    known.update(made_by="python -m campaign.commit_probe", probe=list(PROBE), machine=here)
    wanted = chosen_cells(records_dir, only, undecided, repo)
    before = set(known.get("cells", {}))
    known["cells"] = kept_cells(known, wanted, bool(only or undecided))
    check_dropped(sorted(before - set(known["cells"])), len(before), out, records_dir, prune)
    write_probes(out, known)
    probe_missing(known, wanted, out, limit)
    return known


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m campaign.commit_probe")
    parser.add_argument("--records-dir", default="results/records")
    parser.add_argument(
        "--out", default=None, help="the probe file (default: this machine's, machine_file)"
    )
    parser.add_argument("--limit", type=int, default=None, help="probe at most N (resumable)")
    parser.add_argument(
        "--cells", nargs="*", default=[], help="probe only these configurations (digest prefixes)"
    )
    parser.add_argument(
        "--undecided",
        action="store_true",
        help="probe only the cells whose commits no committed probe file decides yet",
    )
    parser.add_argument(
        "--prune",
        action="store_true",
        help="drop the file's cells whose records no longer mix commits (else refused)",
    )
    args = parser.parse_args(argv)
    args.out = args.out or machine_file(machine())
    if not Path(args.records_dir).is_dir():
        print(f"[commit_probe] --records-dir {args.records_dir} is no folder", file=sys.stderr)
        return 2
    try:
        records_dir, out = Path(args.records_dir), Path(args.out)
        known = run(records_dir, out, args.limit, args.cells, args.undecided, prune=args.prune)
    except (OtherMachine, WouldDrop, UntrustedFile) as err:
        print(f"[commit_probe] {err}", file=sys.stderr)
        return 2
    verdicts = [cell.get("same") for cell in known.get("cells", {}).values()]
    print(
        f"[commit_probe] {verdicts.count(True)} cells train alike at their commits, "
        f"{verdicts.count(False)} differ, {verdicts.count(None)} not decided; {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
