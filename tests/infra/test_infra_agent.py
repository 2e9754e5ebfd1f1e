"""A user's agent project on AWS (issue 34), in the synthesized template: its entry is the
agent, its policy, managed policies, secrets and parameters reach exactly the roles that run
it, nothing secret is in any environment, cdk-nag accepts the user's wildcards and stays strict
on the kit's, and what cannot ship stops synth with one line.

Offline: the project here has no dependencies, so its lock resolves nothing (the lock with a
real dependency, the bundle and the image are tests/infra/process/test_agent_bundle.py's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from a2akit.agent_project import load_project
from a2akit.settings import DEFAULT_AGENT, ENV
from infra.app import build_app
from infra.config import ConfigError, DeployConfig
from infra.jsonrpc_api import HANDLER
from infra.project_lock import LOCK_NAME, lock_project
from infra.worker import WORKER_HANDLER
from tests.infra.conftest import CDK_CONTEXT
from tests.support.template import CONTAINER, environments, lambda_function, role_of, task_role

pytestmark = pytest.mark.slow

MANAGED = "arn:aws:iam::aws:policy/AmazonBedrockReadOnly"
OWN_MANAGED = "arn:aws:iam::111111111111:policy/agent-tables"
SECRET_ARN = "arn:aws:secretsmanager:us-east-1:111111111111:secret:provider-key-AbCdEf"
POLICY = {"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow",
    "Action": ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
    "Resource": ["arn:aws:bedrock:*::foundation-model/anthropic.*"]}]}
ACCESS = {
    "a2a:agentManagedPolicies": f"{MANAGED},{OWN_MANAGED}",
    "a2a:agentSecrets": f"MODEL_KEY=agents/model-key,PROVIDER={SECRET_ARN}",
    "a2a:agentParameters": "MODEL_ID=/agents/model-id,REGION_NAME=agent-region",
}
# The agent-settings keys, all empty: the same as none.
EMPTY = {key: "" for key in ("a2a:agentProject", "a2a:agentPolicy", *ACCESS)}


def write_project(root: Path, *, dependencies: tuple[str, ...] = (), policy: bool = True,
                  lock: bool = True) -> Path:
    """An agent project in `root` (outside the kit): package `plain_agent`, src layout."""
    package = root / "src" / "plain_agent"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text(
        "class Agent:\n"
        "    async def execute(self, context, task):\n"
        "        await task.complete()\n\n\n"
        "agent = Agent()\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_agent.py").write_text("def test_nothing():\n    pass\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "plain-agent"\nversion = "0.1.0"\n'
        f"dependencies = {json.dumps(list(dependencies))}\n\n"
        '[tool.a2akit]\nagent = "plain_agent.agent:agent"\n')
    if policy:
        (root / "iam-policy.json").write_text(json.dumps(POLICY))
    if lock:
        lock_project(load_project(root))
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("plain-agent"))


def synth(bundle: Path, folder: Path, **context: Any) -> Template:
    app = App(context={**CDK_CONTEXT, **context}, outdir=str(folder / "cdk.out"),
              builtin_cloud_formation_validation=False)
    build_app(app, lambda_bundle=str(bundle), build_root=folder / "build")
    (stack,) = app.synth().stacks
    return Template.from_json(stack.template)


def refusal(bundle: Path, folder: Path, **context: Any) -> str:
    """The one line a synth stops with."""
    app = App(context={**CDK_CONTEXT, **context}, outdir=str(folder / "cdk.out"))
    with pytest.raises(ConfigError) as raised:
        build_app(app, lambda_bundle=str(bundle), build_root=folder / "build")
    message = str(raised.value)
    assert "\n" not in message, message
    return message


def _roles_with(template: Template, policy: Any) -> set[str]:
    return {key for key, role in template.find_resources("AWS::IAM::Role").items()
            if policy in role["Properties"].get("ManagedPolicyArns", [])}


def _managed_policy(template: Template, description_start: str) -> str:
    (found,) = [key for key, resource in template.find_resources("AWS::IAM::ManagedPolicy").items()
                if resource["Properties"]["Description"].startswith(description_start)]
    return found


def _runners(template: Template, *, door: bool, container: bool) -> set[str]:
    """The roles whose code runs agents: the worker (when deployed), the door and the
    container when they run them inline."""
    found = set()
    functions = template.find_resources("AWS::Lambda::Function").values()
    if any(f["Properties"]["Handler"] == WORKER_HANDLER for f in functions):
        found.add(role_of(lambda_function(template, WORKER_HANDLER)[1]))
    if door:
        found.add(role_of(lambda_function(template, HANDLER)[1]))
    if container:
        found.add(task_role(template))
    return found


def test_no_agent_settings_synthesize_as_before(template: Template, empty_bundle: Path,
                                                tmp_path: Path) -> None:
    # The session's template has none of the keys; empty values are the same as none.
    assert synth(empty_bundle, tmp_path, **EMPTY).to_json() == template.to_json()
    assert template.find_resources("AWS::IAM::ManagedPolicy") == {}
    for variables in environments(template).values():
        assert variables.get(ENV.AGENT, DEFAULT_AGENT) == DEFAULT_AGENT
        assert ENV.AGENT_SECRETS not in variables and ENV.AGENT_PARAMETERS not in variables


@pytest.mark.parametrize(("execution", "grpc_execution"), [
    ("queue", "queue"), ("inline", "inline"), ("queue", "inline")])
def test_the_agent_s_access_is_on_exactly_the_roles_that_run_it(
        project: Path, empty_bundle: Path, tmp_path: Path, execution: str,
        grpc_execution: str) -> None:
    template = synth(empty_bundle, tmp_path, **{
        "a2a:agentProject": str(project), "a2a:execution": execution,
        "a2a:grpcExecution": grpc_execution, **ACCESS})
    runners = _runners(template, door=execution == "inline",
                       container=grpc_execution == "inline")
    policy = {"Ref": _managed_policy(template, "The agent's own permissions")}
    reads = {"Ref": _managed_policy(template, "The agent's secrets and parameters")}
    for granted in (policy, reads, MANAGED, OWN_MANAGED):
        assert _roles_with(template, granted) == runners, granted
    # The user's document, as written; the reads name exactly the listed secrets and
    # parameters, with no other action (no kms: the default keys need none).
    policies = template.find_resources("AWS::IAM::ManagedPolicy")
    assert policies[policy["Ref"]]["Properties"]["PolicyDocument"]["Statement"] == [{
        **POLICY["Statement"][0], "Resource": POLICY["Statement"][0]["Resource"][0]}]
    secrets, parameters = policies[reads["Ref"]]["Properties"]["PolicyDocument"]["Statement"]
    assert secrets["Action"] == "secretsmanager:GetSecretValue"
    # In any order (CDK sorts a statement's resources).
    (by_name,) = [r for r in secrets["Resource"] if isinstance(r, dict)]
    assert sorted(secrets["Resource"], key=str) == sorted([SECRET_ARN, by_name], key=str)
    assert by_name["Fn::Join"][1][-1] == ":secret:agents/model-key-??????"
    assert parameters["Action"] == "ssm:GetParameter"
    assert sorted(r["Fn::Join"][1][-1] for r in parameters["Resource"]) == [
        ":parameter/agent-region", ":parameter/agents/model-id"]
    # No role gets secrets or parameters any other way (auth=jwt: no API-key secret).
    for resource in template.find_resources("AWS::IAM::Policy").values():
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [
                statement["Action"]]
            assert not any(a.startswith(("secretsmanager:", "ssm:", "bedrock:"))
                           for a in actions), statement


def test_the_environment_names_the_values_never_holds_them(
        project: Path, empty_bundle: Path, tmp_path: Path) -> None:
    template = synth(empty_bundle, tmp_path, **{
        "a2a:agentProject": str(project), "a2a:grpcExecution": "inline", **ACCESS})
    found = environments(template)
    runs = {WORKER_HANDLER, CONTAINER}
    for process, variables in found.items():
        if process in runs:
            assert variables[ENV.AGENT_SECRETS] == (
                f"MODEL_KEY=agents/model-key,PROVIDER={SECRET_ARN}")
            assert variables[ENV.AGENT_PARAMETERS] == (
                "MODEL_ID=/agents/model-id,REGION_NAME=agent-region")
        else:
            assert ENV.AGENT_SECRETS not in variables, process
            assert ENV.AGENT_PARAMETERS not in variables, process
        # Every process that imports the agent (the doors build the card from it) has the
        # project's entry; no A2A_SECRET_* value is ever set.
        if ENV.AGENT in variables:
            assert variables[ENV.AGENT] == "plain_agent.agent:agent"
        assert not [name for name in variables
                    if name.startswith((ENV.SECRET_PREFIX, ENV.PARAMETER_PREFIX))]


def test_a2a_agent_overrides_the_project_s_entry(project: Path, empty_bundle: Path,
                                                 tmp_path: Path) -> None:
    template = synth(empty_bundle, tmp_path, **{"a2a:agentProject": str(project),
                                                "a2a:agent": "plain_agent.agent:Agent"})
    assert {v[ENV.AGENT] for v in environments(template).values() if ENV.AGENT in v} == {
        "plain_agent.agent:Agent"}


def test_the_kit_s_own_statements_stay_strict_under_cdk_nag(
        project: Path, empty_bundle: Path, tmp_path: Path) -> None:
    # The user's wildcards synthesize (the tests above); one of the kit's does not.
    app = App(context={**CDK_CONTEXT, "a2a:agentProject": str(project), **ACCESS},
              outdir=str(tmp_path / "cdk.out"), builtin_cloud_formation_validation=False)
    build_app(app, lambda_bundle=str(empty_bundle), build_root=tmp_path / "build")
    (stack,) = (child for child in app.node.children if isinstance(child, Stack))
    worker_role = stack.worker.function.role  # type: ignore[attr-defined]
    worker_role.add_to_principal_policy(iam.PolicyStatement(
        actions=["bedrock:InvokeModel"], resources=["arn:aws:bedrock:*::foundation-model/*"]))
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    report = json.loads((tmp_path / "cdk.out" / "validation-report.json").read_text())
    flagged = {(violation["ruleName"], construct["constructPath"])
               for plugin in report["pluginReports"] for violation in plugin["violations"]
               for construct in violation["violatingConstructs"]}
    assert flagged == {("AwsSolutions-IAM5[Resource::arn:aws:bedrock:*::foundation-model/*]",
                        "A2AKit/Worker/FunctionRole/DefaultPolicy/Resource")}


def test_what_cannot_ship_stops_synth_with_one_line(
        project: Path, empty_bundle: Path, tmp_path: Path) -> None:
    def stop(**context: Any) -> str:
        return refusal(empty_bundle, tmp_path, **context)

    assert "no such folder" in stop(**{"a2a:agentProject": str(tmp_path / "nowhere")})
    assert stop(**{"a2a:agentProject": str(project),
                   "a2a:agentManagedPolicies": "AmazonBedrockFullAccess"}).startswith(
        "a2a:agentManagedPolicies entries must be IAM policy ARNs")
    assert stop(**{"a2a:agentSecrets": "MODEL KEY=x"}).startswith("a2a:agentSecrets entries")
    assert "neither a name nor an ARN" in stop(**{"a2a:agentParameters": "ID=/a b"})
    assert "no such file" in stop(**{"a2a:agentPolicy": str(tmp_path / "none.json")})
    bad = tmp_path / "policy.json"
    bad.write_text('{"Statement": "everything"}')
    assert "must be an IAM policy document" in stop(**{"a2a:agentPolicy": str(bad)})
    # The agent's module must be the project's.
    assert "not a package" in stop(**{"a2a:agentProject": str(project),
                                      "a2a:agent": "elsewhere.agent:agent"})


def test_a_requirements_txt_project_names_its_agent(empty_bundle: Path, tmp_path: Path) -> None:
    root = tmp_path / "flat"
    root.mkdir()
    (root / "requirements.txt").write_text("")
    (root / "flat_agent.py").write_text("agent = None\n")
    assert "names no agent" in refusal(empty_bundle, tmp_path, **{"a2a:agentProject": str(root)})
    lock_project(load_project(root))
    template = synth(empty_bundle, tmp_path, **{"a2a:agentProject": str(root),
                                                "a2a:agent": "flat_agent:agent"})
    assert environments(template)[WORKER_HANDLER][ENV.AGENT] == "flat_agent:agent"


def test_a_missing_or_stale_lock_or_a_conflicting_pin_stops_synth(
        empty_bundle: Path, tmp_path: Path) -> None:
    root = write_project(tmp_path / "agent", lock=False)
    context = {"a2a:agentProject": str(root)}
    fix = f"run ./dev lock --project {root}"
    assert refusal(empty_bundle, tmp_path, **context) == (
        f"a2a:agentProject={root} has no lock ({LOCK_NAME}): {fix}")
    lock_project(load_project(root))
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("dependencies = []",
                                                       'dependencies = ["cowsay==6.1"]'))
    assert refusal(empty_bundle, tmp_path, **context) == (
        f"{root / LOCK_NAME} is stale (the project's requirements or the kit's "
        f"requirements.lock changed since): {fix}")
    pyproject.write_text(pyproject.read_text().replace('"cowsay==6.1"', '"protobuf<5"'))
    message = refusal(empty_bundle, tmp_path, **context)
    assert message.startswith("the agent project's requirement protobuf<5 conflicts with the "
                              "kit's pin protobuf=="), message


def test_cdk_json_may_carry_lists_and_objects(project: Path) -> None:
    # -c values arrive as strings; cdk.json can hold the same as JSON.
    values = {"a2a:agentProject": str(project), "a2a:agentManagedPolicies": [MANAGED],
              "a2a:agentSecrets": {"MODEL_KEY": "agents/model-key"},
              "a2a:agentParameters": "MODEL_ID=/agents/model-id"}
    config = DeployConfig.from_context(values.get)
    assert config.agent == "plain_agent.agent:agent"
    assert config.agent_project is not None and config.agent_project.root == project.resolve()
    assert config.agent_policy is not None
    assert config.agent_policy.path == project.resolve() / "iam-policy.json"
    assert config.agent_managed_policies == (MANAGED,)
    assert config.agent_secrets == {"MODEL_KEY": "agents/model-key"}
    assert config.agent_parameters == {"MODEL_ID": "/agents/model-id"}
