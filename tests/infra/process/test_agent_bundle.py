"""An agent project's dependencies, as synth ships them (issue 34): `./dev lock --project`
writes the kit's pins plus the project's, hashed; the Lambda asset and the gRPC image's build
context hold the project's package and its dependency; a package without a wheel for Lambda's
platform and a bundle past Lambda's 250 MB each stop with one line.

Needs PyPI (the lock resolves, the bundle installs): cowsay 6.1, one small pure-Python wheel
the kit does not depend on; the bundle's own wheels come from pip's cache after the first run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import App
from aws_cdk.assertions import Template

from a2akit.agent_project import load_project
from a2akit.settings import ENV
from infra.app import build_app
from infra.bundle import LAMBDA_UNZIPPED_LIMIT, OTEL_SCRIPT, RUN_SCRIPT, BundleTooLargeError
from infra.lock import LOCK, read_lock
from infra.project_lock import AGENT_GROUP, LOCK_NAME, ProjectLockError, lock_project
from infra.stack import PROJECT_ROOT
from infra.worker import WORKER_HANDLER
from tests.infra.conftest import CDK_CONTEXT
from tests.infra.test_infra_agent import write_project
from tests.support.template import CONTAINER, environments, lambda_function

pytestmark = pytest.mark.slow

COW_AGENT = '''\
import cowsay

from a2akit import RequestContext, TaskHandle


class Agent:
    name = "Cow"
    description = "Says it with a cow."

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.add_artifact(cowsay.get_output_string("cow", context.text), name="moo")
        await task.complete()


agent = Agent()
'''


def write_cow_project(root: Path) -> Path:
    """A project whose agent imports cowsay (a dependency the kit does not have), locked."""
    write_project(root, dependencies=("cowsay==6.1",), lock=False)
    (root / "src" / "plain_agent" / "agent.py").write_text(COW_AGENT)
    lock_project(load_project(root))
    return root


@pytest.fixture(scope="module")
def cow_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cow_project(tmp_path_factory.mktemp("outside") / "cow-agent")


def test_the_project_lock_is_the_kit_s_plus_the_project_s(cow_project: Path) -> None:
    recorded, entries = read_lock(cow_project / LOCK_NAME)
    _, kit = read_lock(LOCK)
    by_name = {entry.name: entry for entry in entries}
    for pin in kit:  # every kit pin, its version and hashes untouched
        assert (by_name[pin.name].version, by_name[pin.name].hashes) == (pin.version, pin.hashes)
        assert by_name[pin.name].groups - pin.groups <= {AGENT_GROUP}
    assert set(by_name) - {pin.name for pin in kit} == {"cowsay"}
    assert by_name["cowsay"].version == "6.1" and by_name["cowsay"].groups == {AGENT_GROUP}
    assert by_name["cowsay"].hashes  # hashed, as the bundle's pip requires
    assert recorded[AGENT_GROUP] == ["cowsay==6.1"]


def test_dev_lock_project_takes_a_path_from_where_it_runs(tmp_path: Path) -> None:
    # `./dev lock --project REL` from another folder (the venv exists: ./dev reuses it).
    write_project(tmp_path / "rel-agent", dependencies=("cowsay==6.1",), lock=False)
    run = subprocess.run([str(PROJECT_ROOT / "dev"), "lock", "--project", "rel-agent"],
                         cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "rel-agent" / LOCK_NAME).is_file()
    assert f"{tmp_path / 'rel-agent' / LOCK_NAME}: " in run.stdout


def _asset(outdir: Path, name: str) -> Path:
    folder = outdir / f"asset.{name}"
    assert folder.is_dir(), sorted(p.name for p in outdir.iterdir())
    return folder


def test_synth_ships_the_project_and_its_dependency(cow_project: Path, tmp_path: Path) -> None:
    outdir = tmp_path / "cdk.out"
    app = App(context={**CDK_CONTEXT, "a2a:agentProject": str(cow_project)},
              outdir=str(outdir), builtin_cloud_formation_validation=False)
    build_app(app, build_root=tmp_path / "build")  # builds the bundle, stages the image
    (stack,) = app.synth().stacks
    parsed = Template.from_json(stack.template)
    _, worker = lambda_function(parsed, WORKER_HANDLER)
    bundle = _asset(outdir, worker["Code"]["S3Key"].removesuffix(".zip"))
    assert (bundle / "plain_agent" / "agent.py").read_text() == COW_AGENT
    assert (bundle / "cowsay" / "__init__.py").is_file()
    assert not (bundle / "tests").exists()  # the project's tests stay home
    assert (bundle / "a2akit").is_dir() and (bundle / "run.sh").is_file()
    # Both scripts stay executable: Lambda runs otel.sh as an exec wrapper (a2a:otel=true).
    assert all(os.access(bundle / name, os.X_OK) for name in (RUN_SCRIPT, OTEL_SCRIPT))
    assert environments(parsed)[WORKER_HANDLER][ENV.AGENT] == "plain_agent.agent:agent"
    (task,) = parsed.find_resources("AWS::ECS::TaskDefinition").values()
    image = task["Properties"]["ContainerDefinitions"][0]["Image"]["Fn::Sub"].rsplit(":", 1)[1]
    context = _asset(outdir, image)
    assert (context / "agent" / "plain_agent" / "agent.py").read_text() == COW_AGENT
    assert "\ncowsay==6.1 \\\n" in (context / "requirements.lock").read_text()
    dockerfile = (context / "grpc_service" / "Dockerfile").read_text()
    assert dockerfile.index("COPY grpc_service ./grpc_service\n") < dockerfile.index(
        "COPY agent ./\n") < dockerfile.index("USER nonroot")
    assert {p.name for p in context.iterdir()} == {
        "a2akit", "handlers", "grpc_service", "requirements.lock", "agent"}
    assert environments(parsed)[CONTAINER][ENV.AGENT] == "plain_agent.agent:agent"


def test_a_package_without_a_lambda_wheel_stops_the_lock(tmp_path: Path) -> None:
    # docopt 0.6.2 exists only as an sdist: no wheel for any platform.
    root = write_project(tmp_path / "sdist-agent", dependencies=("docopt==0.6.2",), lock=False)
    with pytest.raises(ProjectLockError) as raised:
        lock_project(load_project(root))
    message = str(raised.value)
    assert "\n" not in message
    assert message == (f"{root}: docopt==0.6.2 has no wheel for CPython 3.13 on "
                       "manylinux2014_aarch64 (Lambda arm64), and the bundle installs wheels "
                       "only: choose a version (or a package) that publishes one")
    # The same line from the command, and no lock.
    run = subprocess.run([sys.executable, "-m", "infra.lock", "--project", str(root)],
                         cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 2 and run.stderr.strip().endswith("that publishes one")
    assert len(run.stderr.strip().splitlines()) == 1
    assert not (root / LOCK_NAME).exists()


def test_a_transitive_conflict_with_a_kit_pin_names_both(tmp_path: Path) -> None:
    # proto-plus 1.22.3 needs protobuf<5; the kit pins protobuf 7.
    root = write_project(tmp_path / "old-agent", dependencies=("proto-plus==1.22.3",),
                         lock=False)
    with pytest.raises(ProjectLockError) as raised:
        lock_project(load_project(root))
    message = str(raised.value)
    assert "\n" not in message
    assert "proto-plus 1.22.3" in message and "conflicts with the kit's pin protobuf==" in message


def test_a_bundle_past_lambda_s_limit_stops_synth(tmp_path: Path) -> None:
    root = write_project(tmp_path / "big-agent")
    # A model file in the package: sparse, so the test writes no 250 MB.
    with (root / "src" / "plain_agent" / "weights.bin").open("wb") as weights:
        weights.truncate(LAMBDA_UNZIPPED_LIMIT)
    app = App(context={**CDK_CONTEXT, "a2a:agentProject": str(root), "a2a:grpc": False},
              outdir=str(tmp_path / "cdk.out"))
    with pytest.raises(BundleTooLargeError) as raised:
        build_app(app, build_root=tmp_path / "build")
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("the Lambda bundle is ")
    assert "largest: plain_agent 250 MB, " in message
    assert "docs/your-agent.md#past-lambdas-250-mb" in message


def test_main_prints_the_one_line(tmp_path: Path) -> None:
    # `cdk synth` runs infra.app: a stale lock is one line on stderr and exit status 1.
    pyproject = tmp_path / "stale" / "pyproject.toml"
    root = write_project(pyproject.parent)
    pyproject.write_text(pyproject.read_text().replace("dependencies = []",
                                                       'dependencies = ["cowsay"]'))
    context = {**CDK_CONTEXT, "a2a:agentProject": str(root)}
    run = subprocess.run([sys.executable, "-m", "infra.app"], cwd=PROJECT_ROOT,
                         env={"PATH": "/usr/bin:/bin", "CDK_CONTEXT_JSON": json.dumps(context),
                              "CDK_OUTDIR": str(tmp_path / "cdk.out"),
                              "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"},
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        f"a2akit: cannot synthesize: {root / LOCK_NAME} is stale (the project's requirements or "
        f"the kit's requirements.lock changed since): run ./dev lock --project {root}")
