"""Real Strands agents on a scripted model provider, for the adapter's tests and for kit
processes started by them (`A2A_AGENT=tests.adapters.strands_agent:agent`).

ScriptedModel is a `strands.models.Model` that answers by the rules of tests/adapters/script.py
and streams what Bedrock's provider streams (messageStart, contentBlockStart/Delta/Stop,
messageStop, metadata), so the agent's event loop, tool executor and interrupts run as they do
on a real model.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

from pydantic import BaseModel
from strands import Agent, ToolContext, tool
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec

from a2akit.adapters.strands import StrandsAgent
from tests.adapters import script
from tests.adapters.script import QUESTION, ToolCall, plan, words


class ScriptedModel(Model):
    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, output_model: type[BaseModel], prompt: Messages,
                          system_prompt: str | None = None, **kwargs: Any
                          ) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError

    async def stream(self, messages: Messages, tool_specs: list[ToolSpec] | None = None,
                     system_prompt: str | None = None, **kwargs: Any
                     ) -> AsyncIterable[StreamEvent]:
        last = messages[-1]["content"]
        said = "".join(block.get("text", "") for block in last)
        results = [block["toolResult"] for block in last if "toolResult" in block]
        move = plan(said if not results else None,
                    tool_output=("".join(item.get("text", "") for item in
                                         results[0]["content"]) if results else None),
                    earlier=["".join(block.get("text", "") for block in m["content"])
                             for m in messages[:-1] if m["role"] == "user"
                             and not any("toolResult" in block for block in m["content"])],
                    seen=len(messages))
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(move, ToolCall):
            yield {"contentBlockStart": {"start": {"toolUse": {
                "toolUseId": move.call_id, "name": move.name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": move.arguments}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            async for word in words(move):
                yield {"contentBlockDelta": {"delta": {"text": word}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        yield {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                            "metrics": {"latencyMs": 1}}}


@tool
async def lookup(query: str) -> str:
    """Look a word up in the scripted encyclopedia."""
    return await script.lookup(query)


@tool
async def slow_lookup(query: str) -> str:
    """Look something up, slowly."""
    return await script.slow_lookup(query)


@tool(context=True)
def ask_name(query: str, tool_context: ToolContext) -> str:
    """Ask the caller for their name."""
    return f"My name is {tool_context.interrupt('name', reason=QUESTION)}"


def strands_agent(**options: Any) -> Agent:
    return Agent(model=ScriptedModel(), tools=[lookup, slow_lookup, ask_name],
                 name="Scripted Strands", callback_handler=None, **options)


def make_agent() -> StrandsAgent:
    return StrandsAgent(strands_agent(), description="A scripted Strands agent with tools.")


def make_per_context_agent() -> StrandsAgent:
    """One Strands agent per context (the factory form)."""
    return StrandsAgent(lambda context_id: strands_agent())


# What kit processes serve (A2A_AGENT).
agent = make_agent()

__all__ = ["ScriptedModel", "agent", "make_agent", "make_per_context_agent", "strands_agent"]
