"""The lease sweeper: a Lambda on an EventBridge schedule that ends FAILED every task whose
runner's lease expired (a2akit.execution.leases). Deployed in every mode: an inline front door's
process can freeze or die as well as a worker's."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from constructs import Construct

from .functions import bundle_function

__all__ = ["SWEEPER_HANDLER", "SWEEP_MINUTES", "LeaseSweeper"]

SWEEPER_HANDLER = "handlers.sweeper.handler"
SWEEP_MINUTES = 1  # EventBridge's shortest rate


class LeaseSweeper(Construct):
    """Exposes `function` and `schedule`."""

    def __init__(
        self, scope: Construct, construct_id: str, *, code_dir: str, environment: Mapping[str, str]
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = bundle_function(
            self,
            "Function",
            handler=SWEEPER_HANDLER,
            code_dir=code_dir,
            timeout=Duration.seconds(60),
            environment=environment,
            memory_mb=256,
        )
        self.schedule = events.Rule(
            self,
            "Schedule",
            description="Ends FAILED the tasks whose runner's lease expired",
            schedule=events.Schedule.rate(Duration.minutes(SWEEP_MINUTES)),
            # A missed sweep is made up by the next one a minute later.
            targets=[targets.LambdaFunction(self.function, retry_attempts=0)],
        )
