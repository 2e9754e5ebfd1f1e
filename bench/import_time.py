"""Import time of the JSON-RPC front door, `handlers.jsonrpc` (settings, store, agent, card,
app, Mangum: what a Lambda cold start runs in Python), in fresh interpreters.

    .venv/bin/python bench/import_time.py [--runs 41] [--against CHECKOUT]

Each run is a new interpreter that times `import handlers.jsonrpc` itself (interpreter start
left out); bytecode is compiled once beforehand. With `--against` (a checkout such as
`git worktree add .cache/before HEAD~1`) the two checkouts run alternately, in turns that
swap which goes first, so load on a shared machine falls on both alike; medians and the
ratio are printed. Echo agent, embedded store, anonymous callers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Bytecode is written (a Lambda bundle ships it compiled), whatever the shell says.
ENV = {**{k: v for k, v in os.environ.items()
          if not k.startswith("A2A_") and k != "PYTHONDONTWRITEBYTECODE"},
       "A2A_ALLOW_ANONYMOUS": "true", "A2A_STREAM_BUDGET_SECONDS": "20"}
CODE = ("import time; t = time.perf_counter(); import handlers.jsonrpc; "
        "print(time.perf_counter() - t)")


def once(root: Path) -> float:
    run = subprocess.run([sys.executable, "-c", CODE], cwd=root, capture_output=True,
                         text=True, check=True, env={**ENV, "PYTHONPATH": str(root)})
    return float(run.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--against", type=Path, help="another checkout of the kit")
    args = parser.parse_args()
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    for root in roots:
        once(root)  # bytecode compiled, files in the page cache
    times: dict[Path, list[float]] = {root: [] for root in roots}
    for turn in range(args.runs):
        for root in roots if turn % 2 == 0 else roots[::-1]:
            times[root].append(once(root))
    medians = {root: statistics.median(values) * 1000 for root, values in times.items()}
    for root, values in times.items():
        print(f"{root}: median {medians[root]:.1f} ms, min {min(values) * 1000:.1f} ms "
              f"over {len(values)} imports")
    if args.against:
        print(f"this / that = {medians[ROOT] / medians[roots[1]]:.3f}x")


if __name__ == "__main__":
    main()
