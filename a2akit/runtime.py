"""Assembles the core once per process from settings: agent, store, card, operations.

Also how an entry point fails to start: `explain_startup_errors()` turns a bad setting or an
unreachable store into one line that names the variable to fix.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib
import logging
import sys
import traceback
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from a2akit import aws, telemetry
from a2akit.agent import Agent
from a2akit.auth import Authenticator
from a2akit.card import build_card
from a2akit.execution import make_executor
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import Operations
from a2akit.settings import ENV, INLINE, Settings, SettingsError
from a2akit.store.base import TaskStore

if TYPE_CHECKING:
    from a2akit.push.inline import InlineDelivery

__all__ = [
    "STARTUP_EXIT_CODE",
    "StartupError",
    "attach_push_delivery",
    "build_operations",
    "explain_startup_errors",
    "load_agent",
    "make_store",
]

log = logging.getLogger("a2akit")

# What a command-line entry point exits with when it cannot start (2: a usage error).
STARTUP_EXIT_CODE = 2


class StartupError(Exception):
    """The kit cannot start for a reason outside the settings' values (the store is
    unreachable, a port is taken); the message is one line that names what to fix."""


def load_agent(settings: Settings) -> Agent:
    """Import `settings.agent` (`module:attribute`); the attribute is an agent, or a
    class/factory making one. With an agent project, its folders are searched after the
    installed packages, so its agent imports whether or not `./dev install-agent` installed
    it (its dependencies must be installed).

    Raises SettingsError naming A2A_AGENT (A2A_AGENT_PROJECT when the entry is the
    project's) for anything else, and when importing the module or making the agent fails
    (with the exception and where it was raised)."""
    path = settings.agent
    project = settings.agent_project
    where, hint = f"{ENV.AGENT}={path!r}", ""
    if project is not None:
        for root in map(str, project.import_roots):
            if root not in sys.path:
                sys.path.append(root)
        hint = f" (./dev install-agent {project.root} installs the project and its dependencies)"
        if path == project.agent:
            where = f"{ENV.AGENT_PROJECT}={project.root}: [tool.a2akit] agent {path!r}"
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise SettingsError(f"{where} must look like module:attribute")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SettingsError(f"{where} cannot be imported: {exc}{hint}") from exc
    except Exception as exc:
        # The agent's own module failed while importing: say where, as a traceback would.
        raise SettingsError(f"{where} failed while importing: "
                            f"{type(exc).__name__}: {exc}{_where(exc)}") from exc
    try:
        target = getattr(module, attribute)
    except AttributeError as exc:
        raise SettingsError(f"{where} cannot be imported: {exc}") from exc
    if hasattr(target, "execute") and not isinstance(target, type):
        agent = target
    elif callable(target):
        try:
            agent = target()
        except Exception as exc:
            # The agent's constructor failed (or the factory wants arguments): say where.
            raise SettingsError(f"{where} could not make the agent: "
                                f"{type(exc).__name__}: {exc}{_where(exc)}") from exc
    else:
        raise SettingsError(f"{where} is a {type(target).__name__}, not an agent "
                            "or a class or factory that makes one")
    if not isinstance(agent, Agent):
        raise SettingsError(f"{where} has no async execute(context, task) method")
    return agent


def _where(exc: BaseException) -> str:
    """` (file:line)` of the innermost frame of exc, or of a SyntaxError's own location."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return ""  # its message already says (file, line N)
    frames = traceback.extract_tb(exc.__traceback__)
    return f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""


def make_store(settings: Settings) -> TaskStore:
    """The DynamoDB store when a table is set, else the embedded one.

    Raises SettingsError for an endpoint URL either client rejects, and StartupError when the
    client cannot be made (no region) or, with an emulator endpoint, the table cannot be
    created or read (the emulator is not running)."""
    if not settings.table:
        from a2akit.store.memory import MemoryStore

        return MemoryStore(max_task_bytes=settings.max_task_bytes)
    from a2akit.store._errors import ConnectionFailure, DynamoDBError
    from a2akit.store.dynamodb import DynamoDBStore, env_client, make_client

    endpoint = settings.dynamodb_endpoint
    where = (f"{ENV.DYNAMODB_ENDPOINT}={endpoint}" if endpoint
             else f"{ENV.TABLE}={settings.table}")
    # Credentials and region in the environment (Lambda): the kit's own client, which needs
    # no botocore (about 0.25 s of cold start); anywhere else, boto3's.
    try:
        client: Any = env_client(endpoint)
        if client is None:
            client = make_client(endpoint)
    except ValueError as exc:  # "not an endpoint URL: ...", botocore's "Invalid endpoint: ..."
        raise SettingsError(f"{where} is not a usable endpoint URL: {exc}") from exc
    except Exception as exc:
        failure = aws.failure(exc)
        if failure is None:
            raise
        if failure.kind == "region":
            raise StartupError(f"{where}: no AWS region for the DynamoDB client; "
                               "set AWS_DEFAULT_REGION") from exc
        raise StartupError(f"{where}: cannot make a DynamoDB client: {exc}") from exc
    store = DynamoDBStore(settings.table, client, retention_days=settings.retention_days,
                          owns_client=True, max_task_bytes=settings.max_task_bytes)
    if not endpoint and not settings.on_lambda:
        # A process started by hand or in a container, against AWS: one read now, so missing
        # credentials or a table that is not there stop it with one line, not every call
        # later. (In Lambda the stack made both; its cold start does not pay for the read.)
        _check_table(client, where, settings.table)
    elif endpoint:
        # A local emulator: create the table on first use. Against AWS, never.
        try:
            _run_blocking(store.create_table_if_missing())
        except Exception as exc:
            if not isinstance(exc, DynamoDBError | ConnectionFailure) and (
                    aws.failure(exc) is None):
                raise
            raise StartupError(
                f"{where}: cannot create or read table {settings.table!r} there "
                f"({exc}); is the emulator running? ./dev dynamodb starts one") from exc
    return store


def _check_table(client: Any, where: str, table_name: str) -> None:
    """One GetItem of a key no task has: the read every role of the stack may make."""
    from a2akit.store import table

    try:
        client.get_item(TableName=table_name, Key=table.key("a2akit#startup-check", "-"))
    except Exception as exc:
        failure = aws.failure(exc)
        code = failure.code if failure is not None else getattr(exc, "code", "")
        if failure is not None and failure.kind == "credentials":
            raise StartupError(
                f"{where}: no AWS credentials found for DynamoDB; set AWS_PROFILE or "
                f"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or {ENV.DYNAMODB_ENDPOINT} "
                "for DynamoDB Local (./dev dynamodb)") from None
        if "ResourceNotFoundException" in f"{code} {exc}":
            raise StartupError(f"{where}: no table {table_name!r} in this account and "
                               "region (AWS_REGION); deploy the stack, or set "
                               f"{ENV.DYNAMODB_ENDPOINT} for DynamoDB Local") from None
        raise StartupError(f"{where}: cannot read the table: {exc}") from None


def attach_push_delivery(settings: Settings, store: TaskStore) -> InlineDelivery | None:
    """When this process delivers push notifications itself (A2A_PUSH_DELIVERY=inline),
    the delivery that observes `store`'s writes; None otherwise."""
    if not settings.push_notifications or settings.push_delivery != INLINE:
        return None
    # Imported only here: the sender loads httpx, which the Lambda front door never needs.
    from a2akit.push.dispatcher import make_dispatcher
    from a2akit.push.inline import InlineDelivery

    delivery = InlineDelivery(make_dispatcher(settings, store, task_body03=task_body03))
    store.observe(delivery.observe)
    return delivery


def after_restore(operations: Operations) -> None:
    """Run in each Lambda environment resumed from a SnapStart snapshot (both doors: the
    runtime's hook in handlers.jsonrpc, the Lambda Web Adapter's in handlers.stream)."""
    import random

    operations.store.after_restore()  # connections opened before the snapshot
    random.seed()  # restored copies of one snapshot would otherwise draw the same numbers


def task_body03(task: pb.Task) -> bytes:
    """What a push config an A2A 0.3 caller created gets: the task's 0.3 JSON. The 0.3 family
    is imported on the first such delivery; the push package itself knows no 0.3."""
    from a2akit.compat03.json03 import task_payload

    return task_payload(task)


def _run_blocking(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine to completion from sync code, even inside a running event loop."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, coroutine).result()


def build_operations(settings: Settings, store: TaskStore | None = None,
                     agent: Agent | None = None,
                     authenticator: Authenticator | None = None) -> Operations:
    """The core, assembled once per process: agent, store (with in-process push delivery
    when configured), authenticator, card, and where agents run."""
    telemetry.configure(settings)
    agent = agent if agent is not None else load_agent(settings)
    # The store and the queue before the authenticator: a kit that cannot reach them says
    # only that, not the anonymous-access warning first.
    store = make_store(settings) if store is None else store
    with _sqs_region_named():
        delivery = attach_push_delivery(settings, store)
        executor = make_executor(settings, store, agent)
    if authenticator is None:
        authenticator = Authenticator.from_settings(settings)
    signer = None
    if settings.card_signing_key or settings.card_signing_kms_key_id:
        # Only then: PyJWT, cryptography and rfc8785 stay off an unsigned door's cold start.
        from a2akit.card_signing import make_signer

        signer = make_signer(settings)
    return Operations(settings, store, agent, build_card(settings, agent, authenticator),
                      authenticator, executor, delivery, card_signer=signer)


@contextlib.contextmanager
def _sqs_region_named() -> Iterator[None]:
    """An SQS client (the task queue, the push dead-letter queue) without a region: one line.
    The kit's DynamoDB client reads AWS_REGION too; boto3 reads AWS_DEFAULT_REGION."""
    try:
        yield
    except Exception as exc:
        failure = aws.failure(exc)
        if failure is None or failure.kind != "region":
            raise
        raise StartupError("no AWS region for the SQS client (A2A_EXECUTION=queue, "
                           "A2A_PUSH_DLQ_URL); set AWS_DEFAULT_REGION") from exc


@contextlib.contextmanager
def explain_startup_errors(*, reraise: bool = False) -> Iterator[None]:
    """Around an entry point's start: what keeps the kit from starting becomes one line.

    Catches SettingsError (a variable the kit cannot use, an agent that does not import) and
    StartupError (the store unreachable at start, a port taken). By default (the command-line
    entry points) it prints `a2akit: cannot start: <reason>` to stderr and exits with
    STARTUP_EXIT_CODE, without a traceback. With reraise=True (the Lambda handler, at import)
    it logs that line once at ERROR and raises StartupError with the same line, without the
    chain, so Lambda reports an init error whose message is the line.
    Anything else propagates unchanged: a traceback is then the useful report."""
    try:
        yield
    except (SettingsError, StartupError) as exc:
        line = "a2akit: cannot start: " + " ".join(str(exc).split())
        if reraise:
            log.error("%s", line)
            raise StartupError(line) from None
        print(line, file=sys.stderr, flush=True)
        raise SystemExit(STARTUP_EXIT_CODE) from None
