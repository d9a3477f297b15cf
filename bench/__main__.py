"""Run every benchmark, one after another, and print all their tables.

    python -m bench [--quick] [--only fetch,crawl,...] [--skip ...] [--out results.txt]

Each benchmark runs in its own process (``python -m bench.<name>``), so one's memory and event
loop cannot colour the next one's figures. ``--quick`` passes ``--quick`` to each (every one
finishes in under a minute on 2 vCPUs); without it the full runs take about 20 minutes. The catalog
scaling run (the resolver at 5,000, 20,000 and 50,000 items) is part of the full run only.
``--out`` also writes everything printed to a file. The exit code is the number of benchmarks
that failed (a missed target is not a failure: it is printed in the table).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# (name, module, extra arguments of the full run, extra arguments of the quick run); None: skip
BENCHES: tuple[tuple[str, str, list[str] | None, list[str] | None], ...] = (
    ("fetch", "bench.fetch", [], ["--quick"]),
    ("crawl", "bench.crawl", [], ["--quick"]),
    ("normalize", "bench.normalize", [], ["--quick"]),
    ("resolve", "bench.resolve", [], ["--quick"]),
    (
        "resolve-scale",
        "bench.resolve",
        ["--sizes", "5000,20000,50000", "--baseline-sample", "100"],
        None,
    ),
    ("scheduler", "bench.scheduler", [], ["--quick"]),
    ("index", "bench.index", [], ["--quick"]),
    ("api", "bench.api", [], ["--quick"]),
    ("events", "bench.events", ["--sqlite"], ["--quick"]),
)


def main() -> None:
    names = [name for name, *_ in BENCHES]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="each benchmark's quick run")
    parser.add_argument("--only", help=f"comma-separated, of: {', '.join(names)}")
    parser.add_argument("--skip", help="comma-separated benchmarks to leave out")
    parser.add_argument("--out", type=Path, help="also write all output to this file")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else set(names)
    skip = set(args.skip.split(",")) if args.skip else set()
    unknown = (only | skip) - set(names)
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {sorted(unknown)}; known: {', '.join(names)}")
    out = args.out.open("w", encoding="utf-8") if args.out else None
    failed: list[str] = []
    elapsed: list[tuple[str, float, int]] = []
    began = time.perf_counter()
    try:
        for name, module, full, quick in BENCHES:
            extra = quick if args.quick else full
            if name not in only or name in skip or extra is None:
                continue
            command = [sys.executable, "-m", module, *extra]
            header = f"\n=== {name}: python -m {module} {' '.join(extra)}".rstrip() + "\n"
            print(header, flush=True)
            if out:
                out.write(header + "\n")
            started = time.perf_counter()
            process = subprocess.Popen(  # noqa: S603 - our interpreter, our modules
                command,
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                bufsize=1,
            )
            assert process.stdout is not None
            for line in process.stdout:
                sys.stdout.write(line)
                if out:
                    out.write(line)
            code = process.wait()
            elapsed.append((name, time.perf_counter() - started, code))
            if code:
                failed.append(name)
    finally:
        summary = "\n=== summary\n" + "".join(
            f"  {name:<14} {seconds:>6.0f} s  {'ok' if code == 0 else f'FAILED (exit {code})'}\n"
            for name, seconds, code in elapsed
        )
        summary += f"  {'total':<14} {time.perf_counter() - began:>6.0f} s\n"
        print(summary, end="")
        if out:
            out.write(summary)
            out.close()
    raise SystemExit(len(failed))


if __name__ == "__main__":
    main()
