"""Amazon DynamoDB Local: install it if missing, start it, stop it; `./dev dynamodb` runs it.

The emulator ships in the npm package `amplify-dynamodb-simulator` (folder `emulator/`) and
runs on Java 17. It is installed under `.cache/ddb` of the repository (gitignored). The tests,
the benchmarks and `./dev dynamodb` all start it through `dynamodb_local()`.

    python -m scripts.dynamodb_local [--port 8001]   # foreground, in memory, until Ctrl-C

Only the standard library: `./dev dynamodb` runs it without the project's environment.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["CREDENTIALS", "dynamodb_local", "free_port", "install", "set_dummy_credentials"]

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("A2AKIT_DDB_CACHE", ROOT / ".cache" / "ddb"))
EMULATOR = CACHE / "node_modules" / "amplify-dynamodb-simulator" / "emulator"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_SESSION_TOKEN": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}
DEFAULT_PORT = 8001
START_SECONDS = 30


def set_dummy_credentials() -> None:
    os.environ.update(CREDENTIALS)
    os.environ.pop("AWS_PROFILE", None)


def install() -> Path:
    """The emulator folder, installing the npm package first if it is missing.

    Raises RuntimeError when npm is not on PATH, CalledProcessError when npm fails."""
    if not (EMULATOR / "DynamoDBLocal.jar").exists():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm (Node.js) is needed to install DynamoDB Local")
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE),
             "amplify-dynamodb-simulator"],
            check=True, stdout=subprocess.DEVNULL,
        )
    return EMULATOR


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=0.5):
            return True
    except urllib.error.HTTPError:
        return True  # it answered (400 for a bare GET)
    except OSError:
        return False


@contextlib.contextmanager
def dynamodb_local(port: int | None = None) -> Iterator[str]:
    """Run DynamoDB Local (in memory) on a loopback port, a free one by default; yields its URL.

    Raises RuntimeError when Java is missing or the emulator does not answer within 30 s."""
    emulator = install()
    java = shutil.which("java") or "/usr/bin/java"
    if not Path(java).exists():
        raise RuntimeError("Java 17 is needed to run DynamoDB Local "
                           "(Debian: apt-get install openjdk-17-jre-headless)")
    port = free_port() if port is None else port
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [java, "-Djava.library.path=DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar",
         "-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(port)],
        cwd=emulator, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _answers(url):
            if process.poll() is not None:
                raise RuntimeError(f"DynamoDB Local exited with {process.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"DynamoDB Local did not start in {START_SECONDS} s")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _port_taken(port: int) -> bool:
    with socket.socket() as sock:
        # As a server binds: connections of a run that just stopped (TIME_WAIT) do not count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


def _usage(url: str) -> str:
    """Where it listens, and the command that points the kit at it (as in the README)."""
    return (f"DynamoDB Local  {url}  (in memory: the data goes when it stops; Ctrl-C stops it)\n"
            "Point the kit at it, from another shell (the table is created on first use):\n"
            f"  A2A_TABLE=a2a-tasks AWS_ENDPOINT_URL_DYNAMODB={url} \\\n"
            "  AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_DEFAULT_REGION=us-east-1"
            " ./dev serve")


def main() -> int:
    parser = argparse.ArgumentParser(description="Run DynamoDB Local in the foreground.")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    args = parser.parse_args()
    if _port_taken(args.port):
        print(f"dynamodb: port {args.port} is already in use; pick another with --port",
              file=sys.stderr)
        return 1
    if not (EMULATOR / "DynamoDBLocal.jar").exists():
        print(f"Installing DynamoDB Local (npm amplify-dynamodb-simulator) into {CACHE} ...",
              flush=True)
    stop = False

    def _stop(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    try:
        with dynamodb_local(args.port) as url:
            print(_usage(url), flush=True)
            while not stop:
                time.sleep(1)
                if not stop and not _answers(url):
                    print("dynamodb: DynamoDB Local stopped answering", file=sys.stderr)
                    return 1
    except KeyboardInterrupt:
        pass
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        print(f"dynamodb: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
