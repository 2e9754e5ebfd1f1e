"""CDK app entry point (`cdk.json`: `python -m infra.app`).

Settings come from context (`cdk.json`, `-c a2a:key=value`); see infra/config.py.
"""

from __future__ import annotations

import os
import sys

try:
    from aws_cdk import App, Environment, Validations
    from cdk_nag import AwsSolutionsChecks
except ModuleNotFoundError as exc:  # `cdk` ran a Python without the infra extra
    raise ModuleNotFoundError(
        f"{exc.name} is missing: the CDK app needs the kit's infra extra. Run `./dev synth` "
        "(or `./dev cdk ...`), which uses .venv with it, or `pip install -e '.[infra]'` into "
        "the Python that `cdk` runs", name=exc.name) from exc

from .bundle import DEFAULT_DIR, build_bundle
from .config import AUTH, CONTEXT, ConfigError, DeployConfig
from .stack import A2AStack

__all__ = ["build_app"]


def build_app(app: App | None = None, *, lambda_bundle: str | None = None) -> App:
    """Compose the app; `lambda_bundle` (or context) skips building the Lambda folder."""
    app = app or App()
    config = DeployConfig.from_context(app.node.try_get_context)
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
    bundle = lambda_bundle or config.lambda_bundle
    if bundle is None:
        build_bundle(DEFAULT_DIR, jwt=config.auth == AUTH.JWT, push=config.push)
        bundle = str(DEFAULT_DIR)
    # Context wins; otherwise the CLI's own profile (CDK_DEFAULT_*), as `cdk` sets them.
    env = Environment(
        account=config.account or os.environ.get("CDK_DEFAULT_ACCOUNT"),
        region=config.region or os.environ.get("CDK_DEFAULT_REGION"),
    )
    A2AStack(app, config.stack_name, config=config, lambda_bundle=bundle, env=env)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


def main() -> int:
    """`cdk synth`'s app: a context value the stack cannot use stops it with one line that
    names the key, before anything is built."""
    try:
        app = build_app()
    except ConfigError as exc:
        print(f"a2akit: cannot synthesize: {exc}", file=sys.stderr)
        return 1
    app.synth()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
