"""Instructions per warm SendMessage through the real Mangum handler, counted by callgrind.

    .venv/bin/python bench/mangum_instructions.py [--calls 1000] [--against CHECKOUT]

The handler is `handlers.jsonrpc` as perf.py's kit side runs it (echo agent, embedded store,
anonymous callers), fed the API Gateway HTTP API event with a new message each time. It runs
under `valgrind --tool=callgrind` twice, with `--calls` invocations after the warm-up and with
none, and the difference per call is printed; the events are built before the warm-up in both
runs, so only invocations are counted. Instructions, not seconds: other load on a shared
machine does not move them, so two versions of the code compare exactly. `--against` counts
another checkout of the kit too (say `git worktree add /tmp/before HEAD~1`) and prints the
ratio. Needs valgrind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from perf import EVENT, KIT_ENV, ROOT

WARMUP = 300


def _invoke(root: str, calls: int, built: int) -> None:
    """In the process valgrind counts: build `built` events, then invoke the handler
    WARMUP + `calls` times."""
    sys.path.insert(0, root)  # ahead of this checkout, which importing perf put there
    from _bench_common import lambda_context, send_body, with_body

    from handlers.jsonrpc import handler

    events = [with_body(EVENT, json.dumps(send_body(i))) for i in range(built)]
    context = lambda_context()
    for one in events[:WARMUP + calls]:
        reply = handler(one, context)
        assert reply["statusCode"] == 200 and '"result"' in reply["body"], reply


def _count(root: Path, calls: int, built: int) -> int:
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--invoke", str(root), str(calls), str(built)],
        env={**os.environ, **KIT_ENV, "PYTHONHASHSEED": "0"}, capture_output=True, text=True,
        check=False)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def per_call(root: Path, calls: int) -> float:
    built = WARMUP + calls
    return (_count(root, calls, built) - _count(root, 0, built)) / calls


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--invoke":
        _invoke(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--against", type=Path, help="another checkout of the kit")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("mangum_instructions: needs valgrind (apt install valgrind)")
    this = per_call(ROOT, args.calls)
    print(f"this checkout: {this / 1e6:.3f} M instructions per warm SendMessage")
    if args.against is not None:
        other = per_call(args.against.resolve(), args.calls)
        print(f"{args.against}: {other / 1e6:.3f} M; this / that = {this / other:.3f}x")


if __name__ == "__main__":
    main()
