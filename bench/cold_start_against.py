"""Cold start of the Lambda front door, this checkout against another one, in one run.

    .venv/bin/python bench/cold_start_against.py --against CHECKOUT [--runs 21]

Each run is a fresh interpreter that imports `handlers.jsonrpc` (settings, store, agent,
card, app, Mangum, and now the logging setup) and hands the handler one SendMessage event
(echo agent, embedded store, anonymous callers): what a cold Lambda does before its first
answer. The time is taken inside the child, from before the import to after the answer, so
the interpreter's own start (the same for both) is left out. The two checkouts alternate,
run by run, so a machine that gets busier slows both alike; reported are the medians, their
difference and their ratio. Both checkouts are compiled to bytecode first (the environment
may forbid writing it), so neither compiles in the runs. `git worktree add .cache/before
<commit>` makes the other one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_CHILD = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[1] + "/bench")
    started = time.perf_counter()
    from handlers.jsonrpc import handler
    from _bench_common import lambda_context, send_body, with_body
    event = with_body(sys.argv[2], json.dumps(send_body(0)))
    answer = handler(event, lambda_context())
    took = time.perf_counter() - started
    assert answer["statusCode"] == 200 and '"result"' in answer["body"], answer
    print("TOOK", took, file=sys.stderr)
""")


def _once(root: Path) -> float:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("A2A_")},
           "A2A_ALLOW_ANONYMOUS": "true", "A2A_STREAM_BUDGET_SECONDS": "20",
           "PYTHONPATH": str(root)}
    event = str(ROOT / "tests" / "events" / "apigw_http_v2.json")
    done = subprocess.run([sys.executable, "-c", _CHILD, str(root), event], env=env,
                          capture_output=True, text=True, check=True, cwd=root)
    line = [x for x in done.stderr.splitlines() if x.startswith("TOOK ")][-1]
    return float(line.split()[1]) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--against", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    args.against = args.against.resolve()
    here, there = [], []
    for root in (ROOT, args.against):  # both from bytecode, as a bundle ships it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "a2akit"),
                        str(root / "handlers")], check=True)
    _once(ROOT), _once(args.against)  # files in the page cache
    for run in range(args.runs):
        pair = [(ROOT, here), (args.against, there)]
        for root, times in (pair if run % 2 == 0 else pair[::-1]):
            times.append(_once(root))
    this, other = statistics.median(here), statistics.median(there)
    print(json.dumps({
        "runs": args.runs, "this_ms": round(this, 2), "against_ms": round(other, 2),
        "difference_ms": round(this - other, 2), "ratio": round(this / other, 4),
        "this_spread_ms": [round(min(here), 2), round(max(here), 2)],
        "against_spread_ms": [round(min(there), 2), round(max(there), 2)],
    }, indent=2))


if __name__ == "__main__":
    main()
