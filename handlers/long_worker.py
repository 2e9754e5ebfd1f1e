"""Entry point of the long-task lane's worker: `python -m handlers.long_worker` (the CDK
stack runs it on ECS Fargate, infra/long_lane.py). It polls `A2A_LONG_QUEUE_URL` and runs
each job as the Lambda worker does (`a2akit.execution.worker`), with no time limit
(`a2akit.execution.lane`). SIGTERM or SIGINT stops it well: no new jobs, running agents get
`A2A_LONG_SHUTDOWN_GRACE_SECONDS`, then each still running ends FAILED; exit 0.
"""

from __future__ import annotations

import asyncio
import signal

from a2akit import aws, logs
from a2akit.execution.lane import POLL_SECONDS, Lane
from a2akit.execution.protection import make_protection
from a2akit.execution.worker import Worker
from a2akit.runtime import (
    StartupError,
    attach_push_delivery,
    explain_startup_errors,
    load_agent,
    make_store,
)
from a2akit.settings import ENV, Settings, SettingsError

__all__ = ["main"]

# In-process push deliveries (A2A_PUSH_DELIVERY=inline, locally) get this long at the end.
_PUSH_DRAIN_SECONDS = 5.0


async def _run(settings: Settings) -> None:
    assert settings.long_queue_url is not None
    store = make_store(settings)
    delivery = attach_push_delivery(settings, store)
    worker = Worker(settings, store, load_agent(settings))
    try:
        protection = await asyncio.to_thread(make_protection, settings)
    except (OSError, ValueError) as exc:
        raise StartupError(f"the ECS task metadata endpoint ({ENV.ECS_METADATA_URI}) did not "
                           f"name this task: {exc}") from exc
    sqs = aws.client("sqs", endpoint_url=settings.sqs_endpoint,
                     timeout=POLL_SECONDS + 10)  # above the receive's wait
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    lane = Lane(settings, worker, sqs, settings.long_queue_url, protection=protection)
    print("long worker polling", settings.long_queue_url, flush=True)
    await lane.run(stop)
    if delivery is not None:
        await delivery.drain(_PUSH_DRAIN_SECONDS)
    await store.close()


def main() -> None:
    with explain_startup_errors():
        settings = Settings.from_env()
        if not settings.long_queue_url:
            raise SettingsError(f"{ENV.LONG_QUEUE_URL} is not set: it names the queue the "
                                "long-task lane's worker takes its jobs from")
        logs.configure(settings.log_level, settings.service("long-worker"))
        asyncio.run(_run(settings))


if __name__ == "__main__":
    main()
