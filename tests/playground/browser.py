"""Chromium from the operating system's packages, driven by Playwright for Python with that
executable (Playwright's own browser download is not reachable here). The tests install the
package themselves when it is missing and they may (root, apt-get), as CI runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
# As the machine's probe starts it: no sandbox (root), no GPU, and none of Chromium's own
# background connections, which this network refuses.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]


class BrowserMissing(RuntimeError):
    pass


def chromium() -> Path:
    """The Chromium executable; installs Debian's package when it is missing and this
    process may (root, with apt-get); else BrowserMissing naming what to install."""
    if CHROMIUM.exists():
        return CHROMIUM
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise BrowserMissing(f"{CHROMIUM} is missing: install Debian's chromium package "
                             "(apt-get install chromium) to run the playground's browser tests")
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(command, env=environment, capture_output=True, text=True)
        if done.returncode != 0:
            raise BrowserMissing(f"{' '.join(command)} failed: {done.stderr[-2000:]}")
    return CHROMIUM
