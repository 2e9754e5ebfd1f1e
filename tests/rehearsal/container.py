"""The gRPC container's install without Docker: the files its Dockerfile copies and the pip
command its Dockerfile runs, read from grpc_service/Dockerfile itself, run into a fresh
virtual environment. What the image would lack, this install lacks."""

from __future__ import annotations

import dataclasses
import json
import shlex
import shutil
import subprocess
from pathlib import Path

__all__ = ["ImageRecipe", "install_like_the_image", "read_dockerfile"]


@dataclasses.dataclass(frozen=True)
class ImageRecipe:
    copies: list[tuple[list[str], str]]  # (sources in the build context, destination)
    pip_arguments: list[str]  # what follows `pip install` in the RUN line
    command: list[str]  # CMD


def read_dockerfile(path: Path) -> ImageRecipe:
    """The COPY lines, the `pip install` of the RUN line, and CMD (exec form)."""
    lines = path.read_text().replace("\\\n", " ").splitlines()
    copies: list[tuple[list[str], str]] = []
    pip: list[str] | None = None
    command: list[str] = []
    for line in lines:
        words = line.split(None, 1)
        if not words:
            continue
        instruction, rest = words[0], (words[1] if len(words) > 1 else "")
        if instruction == "COPY":
            *sources, destination = shlex.split(rest)
            copies.append((sources, destination))
        elif instruction == "RUN" and pip is None:
            first = rest.split("&&")[0]
            argv = shlex.split(first)
            if argv[:2] == ["pip", "install"]:
                pip = argv[2:]
            elif argv[:4] == ["python", "-m", "pip", "install"]:
                pip = argv[4:]
        elif instruction == "CMD":
            command = [str(word) for word in json.loads(rest)]
    assert pip is not None, f"{path}: no RUN pip install"
    return ImageRecipe(copies, pip, command)


def install_like_the_image(root: Path, dockerfile: Path, folder: Path,
                           python: str) -> tuple[Path, Path]:
    """(the environment's python, the working directory with the copied files); `python`
    is of the image's version (the lock's wheels are for it)."""
    recipe = read_dockerfile(dockerfile)
    app = folder / "app"
    app.mkdir(parents=True)
    for sources, destination in recipe.copies:
        for source in sources:
            for found in sorted(root.glob(source)):  # `README.md*` may match nothing
                # Docker's rules: a folder's contents go to the destination; a file into
                # it when it ends in `/`, else to that name.
                target = app / destination
                if found.is_dir():
                    shutil.copytree(found, target, dirs_exist_ok=True,
                                    ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    if destination.endswith("/"):
                        target = target / found.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(found, target)
    venv = folder / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    installed = venv / "bin" / "python"
    result = subprocess.run(
        [str(installed), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--no-cache-dir", *recipe.pip_arguments],
        cwd=app, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return installed, app
