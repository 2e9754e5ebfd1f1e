"""CDK app entry point (`cdk.json`: `python -m infra.app`).

Settings come from context (`cdk.json`, `-c a2a:key=value`); see infra/config.py.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from pathlib import Path

try:
    from aws_cdk import App, Environment, Validations
    from cdk_nag import AwsSolutionsChecks
except ModuleNotFoundError as exc:  # `cdk` ran a Python without the infra extra
    raise ModuleNotFoundError(
        f"{exc.name} is missing: the CDK app needs the kit's infra extra. Run `./dev synth` "
        "(or `./dev cdk ...`), which uses .venv with it, or `pip install -e '.[infra]'` into "
        "the Python that `cdk` runs", name=exc.name) from exc

from .agent_code import AgentCode
from .bundle import DEFAULT_DIR, BundleError, build_bundle, check_size
from .config import AUTH, CONTEXT, ConfigError, DeployConfig
from .grpc_service import stage_agent_image
from .lock import LOCK
from .project_lock import check_lock
from .region import place
from .stack import PROJECT_ROOT, A2AStack

__all__ = ["BUNDLING_STACKS", "build_app"]

# The stacks whose assets the CDK CLI asks to bundle (cx_api's BUNDLING_STACKS): every stack
# ("**") for synth, diff, deploy, watch and import (or their --exclusively list), none for ls,
# destroy and the other commands; unset outside the CLI.
BUNDLING_STACKS = "aws:cdk:bundling-stacks"


def build_app(app: App | None = None, *, lambda_bundle: str | None = None,
              build_root: Path | None = None) -> App:
    """Compose the app; `lambda_bundle` (or context) skips building the Lambda folder, which
    is built under `build_root` (default: the kit's build/), as is an agent project's image
    context; neither is built when the CDK CLI bundles nothing (`cdk ls`: BUNDLING_STACKS).

    Raises ConfigError (its subclasses: the agent project's lock or code) and BundleError
    (pip failed, or the folder is over Lambda's limit), each with one line."""
    app = app or App()
    config = DeployConfig.from_context(app.node.try_get_context)
    # Context wins; otherwise the CLI's own profile (CDK_DEFAULT_*), as `cdk` sets them.
    account = config.account or os.environ.get("CDK_DEFAULT_ACCOUNT")
    placement = place(config, config.region or os.environ.get("CDK_DEFAULT_REGION"))
    build = build_root or DEFAULT_DIR.parent
    agent: AgentCode | None = None
    lock = LOCK
    if config.agent_project is not None:
        agent = AgentCode(config.agent_project, config.agent)
        agent.sources()  # the agent's module is the project's: said before anything is built
        lock = check_lock(config.agent_project)
    if not config.alarm_email:
        # DeployConfig refused this already with a2a:requireAlarmSubscriber=true.
        print(f"a2akit: warning: {CONTEXT.ALARM_EMAIL} is unset: the alarms notify an SNS "
              f"topic nobody subscribes to (set it, or {CONTEXT.REQUIRE_ALARM_SUBSCRIBER}=true "
              "to make this an error)", file=sys.stderr)
    if config.reserved_concurrency is None:
        print(f"a2akit: warning: {CONTEXT.RESERVED_CONCURRENCY}=none: the door reserves no "
              "concurrency, so only the stage throttling (a2a:throttleRateLimit, "
              "a2a:throttleBurstLimit) keeps a flood from taking the concurrency the worker "
              "and the sweeper need", file=sys.stderr)
    bundling = _bundling(app, config.stack_name)
    bundle = lambda_bundle or config.lambda_bundle
    if bundle is None and not bundling:
        # `cdk ls`, `destroy` and the like use no asset: an empty stand-in, nothing built, so
        # inspecting the stack runs no pip and needs no network.
        bundle = str(_stand_in(build))
    else:
        if bundle is None:
            # An agent project's folder apart from the kit's: switching does not rebuild both.
            target = build / ("lambda" if agent is None else "lambda-agent")
            build_bundle(target, jwt=config.auth == AUTH.JWT or config.card_signing,
                         push=config.push, lock=lock,
                         agent=agent)
            bundle = str(target)
        check_size(Path(bundle), otel=config.otel)
    image_context = None
    if agent is not None and (config.grpc or config.long_lane) and bundling:
        image_context = stage_agent_image(PROJECT_ROOT, agent, lock, build / "image-agent")
    A2AStack(app, config.stack_name, config=config, lambda_bundle=bundle, placement=placement,
             image_context=image_context,
             env=Environment(account=account, region=placement.region))
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


def _bundling(app: App, stack_name: str) -> bool:
    """Whether the CLI asks for this stack's assets, as `Stack.bundling_required` decides
    (its patterns against the stack's path); outside the CLI, always."""
    patterns = app.node.try_get_context(BUNDLING_STACKS)
    if patterns is None:
        return True
    return any(fnmatch.fnmatchcase(stack_name, pattern.replace("**", "*"))
               for pattern in patterns)


def _stand_in(build: Path) -> Path:
    """The Lambda folder's stand-in where the CLI bundles nothing."""
    folder = build / "lambda-unbuilt"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "NOT-BUILT.txt").write_text(
        "A stand-in for the Lambda folder: `cdk ls` and the other commands that use no asset\n"
        "build nothing (infra/app.py). synth, diff and deploy build build/lambda.\n")
    return folder


def main() -> int:
    """`cdk synth`'s app: a context value the stack cannot use (or that does not fit the
    region: infra/region.py) stops it with one line that names the key, before anything is
    built; so do an agent project's missing or stale lock
    and a bundle past Lambda's limit."""
    try:
        app = build_app()
    except (ConfigError, BundleError) as exc:
        print(f"a2akit: cannot synthesize: {exc}", file=sys.stderr)
        return 1
    app.synth()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
