"""ECS task scale-in protection for the long-task lane's worker: while an agent runs in this
task, neither a scale-in nor a deploy stops it (ECS waits for the protection to end).

The worker protects its own task through the ECS API (`UpdateTaskProtection`), made like
every other AWS call by `a2akit.aws.client` (standard retries, `aws.failure` reads what went
wrong). Its cluster and task ARN come from the task metadata endpoint
(`ECS_CONTAINER_METADATA_URI_V4`/task), which ECS gives every container; outside ECS there is
no such endpoint and nothing to protect (`make_protection` returns a `NoProtection`).

Why the API and not the ECS agent endpoint (`$ECS_AGENT_URI/task-protection/v1/state`, which
AWS recommends from inside a container): the endpoint is a proxy that makes the same call with
the task role's credentials, so the role needs `ecs:UpdateTaskProtection` either way (ECS's
guide lists it for both). Through the API the call goes by the kit's one AWS edge (its
retries, timeouts, failure reading, and the endpoint override that lets tests run it against
a local stand-in), and the grant is written out on the role, scoped to the tasks of the
lane's own cluster. The cost is one metadata read at start (the endpoint would need none).

Protection is counted: the first agent to start enables it, the last to end disables it. It
expires after `PROTECTION_MINUTES` unless renewed, so a worker that hangs cannot hold its task
forever; while agents run it is renewed every `RENEW_SECONDS`. A failed call is logged and
the agent runs on unprotected: a scale-in then stops it as a deploy would (SIGTERM, the
shutdown grace, FAILED).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import urllib.request
from typing import Any

from a2akit import aws
from a2akit.settings import Settings

__all__ = ["PROTECTION_MINUTES", "RENEW_SECONDS", "NoProtection", "Protection",
           "TaskProtection", "make_protection", "task_identity"]

log = logging.getLogger("a2akit.protection")

# ECS accepts 1 to 2880 minutes; an hour, renewed every 20 minutes while agents run.
PROTECTION_MINUTES = 60
RENEW_SECONDS = 20 * 60.0


class Protection:
    """What the lane calls: `hold()` as an agent starts, `release()` when it ended."""

    async def hold(self) -> None:
        """An agent starts: protect the task (never raises)."""

    async def release(self) -> None:
        """An agent ended: unprotect the task when it was the last (never raises)."""

    async def close(self) -> None:
        """Stop renewing."""


class NoProtection(Protection):
    """Outside ECS: nothing to protect."""


class TaskProtection(Protection):
    """Scale-in protection of one ECS task through `UpdateTaskProtection`."""

    def __init__(self, client: Any, cluster: str, task_arn: str, *,
                 minutes: int = PROTECTION_MINUTES, renew_seconds: float = RENEW_SECONDS
                 ) -> None:
        self._client = client
        self.cluster = cluster
        self.task_arn = task_arn
        self._minutes = minutes
        self._renew_seconds = renew_seconds
        self._count = 0
        self._enabled = False
        self._lock = asyncio.Lock()
        self._renewer: asyncio.Task[None] | None = None

    async def hold(self) -> None:
        self._count += 1
        if self._renewer is None:
            self._renewer = asyncio.create_task(self._renew())
        await self._apply()

    async def release(self) -> None:
        self._count = max(0, self._count - 1)
        if self._count == 0 and self._renewer is not None:
            self._renewer.cancel()
            self._renewer = None
        await self._apply()

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
            self._renewer = None

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self._renew_seconds)
            await self._apply(renew=True)

    async def _apply(self, *, renew: bool = False) -> None:
        """Make ECS's state match the count (one call at a time)."""
        async with self._lock:
            want = self._count > 0
            if want == self._enabled and not (want and renew):
                return
            if await self._update(want):
                self._enabled = want

    async def _update(self, enabled: bool) -> bool:
        arguments: dict[str, Any] = {"cluster": self.cluster, "tasks": [self.task_arn],
                                     "protectionEnabled": enabled}
        if enabled:
            arguments["expiresInMinutes"] = self._minutes
        try:
            answer = await asyncio.to_thread(self._client.update_task_protection, **arguments)
        except Exception as exc:
            failure = aws.failure(exc)
            if failure is None:
                raise
            log.warning("could not %s scale-in protection of this task: %s (%s)",
                        "enable" if enabled else "disable", failure.code, failure.kind)
            return False
        failures = answer.get("failures") or []
        if failures:
            log.warning("ECS refused scale-in protection of this task: %s", failures)
            return False
        log.info("scale-in protection %s (%d running agent(s))",
                 f"on for {self._minutes} min" if enabled else "off", self._count)
        return True


def task_identity(metadata_uri: str, timeout: float = 3.0) -> tuple[str, str]:
    """(cluster, task ARN) of the task this container runs in, from the task metadata
    endpoint (v4). Raises OSError or ValueError when it does not answer with them."""
    with urllib.request.urlopen(f"{metadata_uri.rstrip('/')}/task",
                                timeout=timeout) as response:
        task = json.loads(response.read())
    cluster, task_arn = task.get("Cluster"), task.get("TaskARN")
    if not isinstance(cluster, str) or not isinstance(task_arn, str):
        raise ValueError("the task metadata names no Cluster and TaskARN")
    return cluster, task_arn


def make_protection(settings: Settings) -> Protection:
    """The task's protection on ECS (`settings.ecs_metadata_uri` set), else NoProtection.

    Raises OSError or ValueError when the metadata endpoint does not answer."""
    if settings.ecs_metadata_uri is None:
        log.info("not on ECS (no task metadata endpoint): no scale-in protection")
        return NoProtection()
    cluster, task_arn = task_identity(settings.ecs_metadata_uri)
    # Few, short attempts: the agent is already starting while this call runs.
    client = aws.client("ecs", max_attempts=3, timeout=5, connect_timeout=2)
    return TaskProtection(client, cluster, task_arn)
