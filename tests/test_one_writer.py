"""Every file the framework and the campaign write goes through one gate (dfl_bench.untrusted:
`writer`, `write_text`, `write_bytes`; dfl_bench.outputs, its checks of what a command line
names, in front of it), which follows no symbolic link: a static scan of dfl_bench/ and
campaign/ for a write that goes around it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GATES = ("dfl_bench/untrusted.py", "dfl_bench/outputs.py")
GATE_MODULES = {"untrusted", "outputs"}  # `outputs.write_text(...)` is the gate's, no Path's
# Calls that hand back a file object a write may go to: the gate's, or memory.
OPENERS = {"writer", "BytesIO", "StringIO"}
# (module, function, call) of the writes allowed around the gate, each for its reason:
ALLOWED = {
    # a checkpoint: Lightning writes it to a temporary checked by `unlinked` just before, in the
    # job's checkpoint folder, and os.replace puts it in place (a link there is replaced)
    ("dfl_bench/lifecycle/checkpoint.py", "save", "save_checkpoint"),
}
MODE = re.compile(r"[rwaxbt+]+(:\w*)?")  # an open() mode ("w", "ab", "w:gz")
# called name -> the index of the argument that names where it writes
TARGETS = {
    "savefig": 0,
    "save": 0,  # PIL's Image.save, np.save
    "savez": 0,
    "savez_compressed": 0,
    "to_csv": 0,
    "to_parquet": 0,
    "to_json": 0,
    "dump": 1,  # json.dump(value, file)
    "save_checkpoint": 0,  # Lightning's torch.save
}


def _name(func: ast.expr) -> str:
    """The called name: `open`, `savefig` (an attribute's last part)."""
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _writes_mode(call: ast.Call) -> bool:
    """An open() call with a mode that writes (given as text), not into a file object it got."""
    if any(k.arg == "fileobj" for k in call.keywords):
        return False
    given = [*call.args[:2], *(k.value for k in call.keywords if k.arg == "mode")]
    modes = [a.value for a in given if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return any(MODE.fullmatch(m) and set(m) & set("wax+") for m in modes)


def _gated(scope: ast.AST) -> set[str]:
    """The names `scope` binds to a file object of OPENERS (`with writer(p) as out`, `f =
    writer(p)`, `buffer = io.BytesIO()`)."""
    names = set()
    for node in ast.walk(scope):
        pairs = []
        if isinstance(node, ast.With):
            pairs = [(item.optional_vars, item.context_expr) for item in node.items]
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            pairs = [(node.targets[0], node.value)]
        for target, value in pairs:
            opened = isinstance(value, ast.Call) and _name(value.func) in OPENERS
            if opened and isinstance(target, ast.Name):
                names.add(target.id)
    return names


def _calls_around_the_gate(tree: ast.Module) -> list[tuple[str, str, int]]:
    """(function, call, line) of each write in `tree` that does not go through the gate."""
    found = []
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]
    inner = {}  # each call's innermost function (or the module)
    for scope in scopes:
        for node in ast.walk(scope):
            if isinstance(node, ast.Call):
                inner[node] = scope
    for call, scope in inner.items():
        name, gated = _name(call.func), _gated(scope)
        function = getattr(scope, "name", "<module>")
        if name in ("write_text", "write_bytes") and isinstance(call.func, ast.Attribute):
            if _name(call.func.value) not in GATE_MODULES:
                found.append((function, name, call.lineno))
        elif name == "open" and _writes_mode(call):
            found.append((function, name, call.lineno))
        elif name == "save" and _name(getattr(call.func, "value", call.func)) == "torch":
            target = call.args[1] if len(call.args) > 1 else None
            if not (isinstance(target, ast.Name) and target.id in gated):
                found.append((function, "torch.save", call.lineno))
        elif (
            name in TARGETS and isinstance(call.func, ast.Attribute) and call.args[TARGETS[name] :]
        ):
            target = call.args[TARGETS[name]]
            if not (isinstance(target, ast.Name) and target.id in gated):
                owner = _name(getattr(call.func, "value", call.func))
                found.append((function, f"json.{name}" if owner == "json" else name, call.lineno))
    return found


def writes_around_the_gate(paths: list[Path]) -> list[str]:
    """`module:line function call` of each write of `paths` that is neither through the gate nor
    ALLOWED."""
    out = []
    for path in paths:
        module = path.relative_to(ROOT).as_posix()
        if module in GATES:
            continue
        for function, call, line in _calls_around_the_gate(ast.parse(path.read_text())):
            if (module, function, call) not in ALLOWED:
                out.append(f"{module}:{line} {function} {call}")
    return sorted(out)


def test_every_file_is_written_through_the_one_gate():
    paths = sorted([*(ROOT / "dfl_bench").rglob("*.py"), *(ROOT / "campaign").rglob("*.py")])
    assert writes_around_the_gate(paths) == []


def test_the_scan_sees_each_kind_of_write_around_the_gate(tmp_path):
    source = tmp_path / "module.py"
    source.write_text(
        "import json, numpy as np, torch\n"
        "def f(path, fig, frame, value, image):\n"
        "    path.write_text('x')\n"
        "    path.write_bytes(b'x')\n"
        "    open(path, 'a')\n"
        "    path.open(mode='w')\n"
        "    json.dump(value, open(path, 'w'))\n"
        "    np.savez(path, a=value)\n"
        "    fig.savefig(path)\n"
        "    torch.save(value, path)\n"
        "    frame.to_csv(path)\n"
        "    image.save(path)\n"
        "def g(path, fig, frame, value):\n"  # through the gate, or reading: nothing found
        "    with writer(path, 'wb') as out:\n"
        "        fig.savefig(out, format='png')\n"
        "    with writer(path) as out:\n"
        "        json.dump(value, out)\n"
        "        frame.to_csv(out)\n"
        "    open(path)\n"
        "    open(path, 'rb')\n"
        "    frame.to_csv()\n"
        "    json.dumps(value)\n"
        "    tarfile.open(fileobj=out, mode='w:gz')\n"
        "    outputs.write_text(path, 'x', mark)\n"
    )
    found = [line.split(" ", 1)[1] for line in _scan(source)]
    assert found == [
        "f write_text",
        "f write_bytes",
        "f open",
        "f open",
        "f json.dump",
        "f open",
        "f savez",
        "f savefig",
        "f torch.save",
        "f to_csv",
        "f save",
    ]


def _scan(source: Path) -> list[str]:
    """The writes around the gate of one file (anywhere), in the order of their lines."""
    found = sorted(_calls_around_the_gate(ast.parse(source.read_text())), key=lambda f: f[2])
    return [f"{line} {function} {call}" for function, call, line in found]
