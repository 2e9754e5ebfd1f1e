"""Real OpenAI Agents SDK agents on a scripted model, for the adapter's tests and for kit
processes started by them (`A2A_AGENT=tests.adapters.openai_agent:agent`).

ScriptedModel implements `agents.models.interface.Model`: it answers by the rules of
tests/adapters/script.py and streams Responses API event objects as OpenAI's own streams them
(response.created, output_item.added, output_text.delta ..., output_item.done,
response.completed), so the SDK's runner, tool loop and sessions run as they do on a real
model. Nothing here reaches the network: no OpenAI client is ever made, tracing is off.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from agents import Agent, function_tool
from agents.models.interface import Model
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from a2akit.adapters.openai_agents import OpenAIAgent
from tests.adapters import script
from tests.adapters.script import ToolCall, plan, words


def _text(item: Any) -> str:
    """The text of an input item (a message's string or parts, a tool's output)."""
    content = item.get("content", item.get("output", ""))
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _user_said(items: list[Any]) -> list[str]:
    return [_text(i) for i in items if i.get("role") == "user"]


def _response(output: list[Any], status: str) -> Response:
    return Response(
        id="resp-scripted", created_at=0, model="scripted", object="response", output=output,
        tool_choice="auto", tools=[], top_p=None, parallel_tool_calls=False,
        status=status,  # type: ignore[arg-type]
        usage=ResponseUsage(
            input_tokens=1, output_tokens=1, total_tokens=2,
            input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
            output_tokens_details=OutputTokensDetails(reasoning_tokens=0)))


class _Numbered:
    """Sequence numbers for one response's events."""

    def __init__(self) -> None:
        self._next = 0

    def __iter__(self) -> Iterator[int]:
        return self

    def __next__(self) -> int:
        self._next += 1
        return self._next - 1


class ScriptedModel(Model):
    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the adapter streams")

    async def stream_response(self, system_instructions: str | None,
                              input: str | list[Any], *args: Any,
                              **kwargs: Any) -> AsyncIterator[Any]:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else input
        last = items[-1]
        output = last.get("type") == "function_call_output"
        move = plan(None if output else _text(last),
                    tool_output=_text(last) if output else None,
                    earlier=_user_said(items[:-1]), seen=len(items))
        seq = _Numbered()
        yield ResponseCreatedEvent(type="response.created", sequence_number=next(seq),
                                   response=_response([], "in_progress"))
        item: Any
        if isinstance(move, ToolCall):
            item = ResponseFunctionToolCall(
                id=f"fc-{move.call_id}", call_id=move.call_id, type="function_call",
                name=move.name, arguments=move.arguments, status="completed")
            yield ResponseOutputItemAddedEvent(
                type="response.output_item.added", output_index=0, sequence_number=next(seq),
                item=item.model_copy(update={"arguments": "", "status": "in_progress"}))
            yield ResponseFunctionCallArgumentsDoneEvent(
                type="response.function_call_arguments.done", item_id=item.id, name=move.name,
                output_index=0, arguments=move.arguments, sequence_number=next(seq))
        else:
            item = ResponseOutputMessage(id=f"msg-{len(items)}", type="message",
                                         role="assistant", status="in_progress", content=[])
            yield ResponseOutputItemAddedEvent(type="response.output_item.added", item=item,
                                               output_index=0, sequence_number=next(seq))
            part = ResponseOutputText(type="output_text", text="", annotations=[])
            yield ResponseContentPartAddedEvent(
                type="response.content_part.added", item_id=item.id, output_index=0,
                content_index=0, part=part, sequence_number=next(seq))
            async for word in words(move):
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta", item_id=item.id, output_index=0,
                    content_index=0, delta=word, logprobs=[], sequence_number=next(seq))
            part = part.model_copy(update={"text": move})
            yield ResponseTextDoneEvent(
                type="response.output_text.done", item_id=item.id, output_index=0,
                content_index=0, text=move, logprobs=[], sequence_number=next(seq))
            yield ResponseContentPartDoneEvent(
                type="response.content_part.done", item_id=item.id, output_index=0,
                content_index=0, part=part, sequence_number=next(seq))
            item = item.model_copy(update={"status": "completed", "content": [part]})
        yield ResponseOutputItemDoneEvent(type="response.output_item.done", item=item,
                                          output_index=0, sequence_number=next(seq))
        yield ResponseCompletedEvent(type="response.completed", sequence_number=next(seq),
                                     response=_response([item], "completed"))


@function_tool
async def lookup(query: str) -> str:
    """Look a word up in the scripted encyclopedia."""
    return await script.lookup(query)


@function_tool
async def slow_lookup(query: str) -> str:
    """Look something up, slowly."""
    return await script.slow_lookup(query)


def openai_agent() -> Agent[Any]:
    return Agent(name="Scripted OpenAI", instructions="Answer by the script.",
                 model=ScriptedModel(), tools=[lookup, slow_lookup])


def make_agent() -> OpenAIAgent:
    return OpenAIAgent(openai_agent(), description="A scripted OpenAI Agents SDK agent.")


# What kit processes serve (A2A_AGENT).
agent = make_agent()

__all__ = ["ScriptedModel", "agent", "make_agent", "openai_agent"]
