"""`python -m dfl_bench.theory`: reproduce the analytical results of Sections 5-8."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from dfl_bench import outputs
from dfl_bench.theory import surfaces, theory_plots
from dfl_bench.theory.gradient_ascent import (
    MAIN_PROTOCOL,
    QUICK_PROTOCOL,
    VARIANT_PROTOCOLS,
    ascent_table,
)
from dfl_bench.theory.nonvanishing import default_cases, fraction_table
from dfl_bench.theory.theory_report import OWN, write_readme

AGGREGATOR_PS = (1.5, 2.0, 3.0, 5.0, 10.0)
BINARY_PS = (0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
FULL = {"samples": 250_000, "inits": 10_000, "max_n": 10, "resolution": 41}
QUICK = {"samples": 20_000, "inits": 200, "max_n": 5, "resolution": 11}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(prog="python -m dfl_bench.theory", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("results/theory"), help="output folder")
    parser.add_argument("--samples", type=int, help="Monte Carlo samples per fraction")
    parser.add_argument("--inits", type=int, help="random initializations per ascent experiment")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    parser.add_argument(
        "--quick", action="store_true", help="small samples, n <= 5, one short ascent protocol"
    )
    args = parser.parse_args(argv)
    for key in ("samples", "inits"):
        value = getattr(args, key)
        if value is not None and value < 1:
            parser.error(f"--{key} must be a positive integer, got {value}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Write fractions.csv, gradient_ascent.csv, the PNGs and README.md under --out."""
    args = parse_args(argv)
    defaults = QUICK if args.quick else FULL
    samples = args.samples or defaults["samples"]
    inits = args.inits or defaults["inits"]
    protocols = [QUICK_PROTOCOL] if args.quick else [MAIN_PROTOCOL, *VARIANT_PROTOCOLS]
    out = outputs.checked("dfl_bench.theory", args.out, OWN)  # before anything is computed

    cases = default_cases(range(2, defaults["max_n"] + 1), AGGREGATOR_PS, BINARY_PS)
    fractions = fraction_table(cases, samples, args.seed)
    with outputs.writer(out / "fractions.csv", OWN["fractions.csv"]) as csv:
        fractions.to_csv(csv, index=False)
    ascent = ascent_table(protocols, inits, args.seed)
    with outputs.writer(out / "gradient_ascent.csv", OWN["gradient_ascent.csv"]) as csv:
        ascent.to_csv(csv, index=False)
    files = [
        out / "fractions.csv",
        out / "gradient_ascent.csv",
        theory_plots.ratio_figure(fractions, out / "ratio_2_yager.png"),
        theory_plots.ascent_figure(ascent, out / "gradient_ascent.png"),
        *surfaces.draw_all(out, defaults["resolution"]),
    ]
    command = shlex.join(
        ["python", "-m", "dfl_bench.theory", *(sys.argv[1:] if argv is None else argv)]
    )
    settings = {
        "seed": args.seed,
        "samples": samples,
        "inits": inits,
        "n": f"2..{defaults['max_n']}",
    }
    readme = write_readme(out / "README.md", command, settings, fractions, ascent, files)
    print(f"wrote {len(files) + 1} files to {out}: {', '.join(f.name for f in [*files, readme])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
