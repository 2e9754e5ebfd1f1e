"""Assembles the core once per process from settings: agent, store, card, operations."""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
from collections.abc import Coroutine
from typing import Any

from a2akit.agent import Agent
from a2akit.card import build_card
from a2akit.operations import Operations
from a2akit.settings import Settings, SettingsError
from a2akit.store.base import TaskStore

__all__ = ["build_operations", "load_agent", "make_store"]


def load_agent(path: str) -> Agent:
    """Import `module:attribute`; the attribute is an agent, or a class/factory making one."""
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise SettingsError(f"A2A_AGENT must look like module:attribute, not {path!r}")
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise SettingsError(f"A2A_AGENT={path!r} cannot be imported: {exc}") from exc
    agent = target if hasattr(target, "execute") and not isinstance(target, type) else target()
    if not isinstance(agent, Agent):
        raise SettingsError(f"A2A_AGENT={path!r} has no async execute(context, task) method")
    return agent


def make_store(settings: Settings) -> TaskStore:
    if settings.table:
        from a2akit.store.dynamodb import DynamoDBStore, env_client, make_client

        # Credentials and region in the environment (Lambda): the kit's own client, which
        # needs no botocore (about 0.25 s of cold start); anywhere else, boto3's.
        client = env_client(settings.dynamodb_endpoint) or make_client(
            settings.dynamodb_endpoint)
        store = DynamoDBStore(settings.table, client, retention_days=settings.retention_days,
                              owns_client=True)
        if settings.dynamodb_endpoint:
            # A local emulator: create the table on first use. Against AWS, never.
            _run_blocking(store.create_table_if_missing())
        return store
    from a2akit.store.memory import MemoryStore

    return MemoryStore()


def _run_blocking(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine to completion from sync code, even inside a running event loop."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, coroutine).result()


def build_operations(settings: Settings, store: TaskStore | None = None,
                     agent: Agent | None = None) -> Operations:
    agent = agent if agent is not None else load_agent(settings.agent)
    return Operations(settings, store if store is not None else make_store(settings), agent,
                      build_card(settings, agent))
