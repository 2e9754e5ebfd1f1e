"""The scripted model of every adapter's tests, whatever the framework: what it does next is
decided here by rule, and each framework's model class (graphs.py, strands_agent.py,
openai_agent.py) only speaks its framework's stream format. Rules, not a list of answers: a
list would be shared by every test of a process.

On the last message of the conversation:

    "tool X"     asks for the `lookup` tool with X; after the tool, answers with its result
    "slowtool"   asks for `slow_lookup`, which waits a minute unless cancelled
    "interview"  asks for `ask_name`, whose answer comes from the caller (where the framework
                 can interrupt a tool)
    "boom"       raises ModelOverloaded, whose text holds what must not reach a caller
    "recall"     answers with every earlier user message of the conversation
    "long"       writes 400 words (20 s), unless cancelled
    anything     "You said: <text>. I have seen <n> messages in this thread so far."

An answer streams one word per TOKEN_DELAY_SECONDS (environment, read at import; default
0.05).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncIterator, Sequence

DELAY_ENV = "TOKEN_DELAY_SECONDS"
DELAY = float(os.environ.get(DELAY_ENV, "0.05"))
SECRET = "sk-live-123 at 10.1.2.3"  # in the model's exception text: never in a task
QUESTION = "What is your name?"
LONG_TEXT = " ".join(["word"] * 400)


class ToolWatch:
    """When slow_lookup (or a long answer) started and ended, for the cancellation tests in
    this process."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.started = asyncio.Event()
        self.ended = asyncio.Event()


SLOW_TOOL = ToolWatch()
LONG_ANSWER = ToolWatch()


class ModelOverloaded(RuntimeError):
    """What a model provider's client raises; its text carries internals."""


@dataclasses.dataclass(frozen=True)
class ToolCall:
    name: str
    query: str

    @property
    def call_id(self) -> str:
        return f"call-{self.name}"

    @property
    def arguments(self) -> str:
        return f'{{"query": "{self.query}"}}'


def plan(said: str | None, *, tool_output: str | None = None, earlier: Sequence[str] = (),
         seen: int = 1) -> str | ToolCall:
    """The model's next move: a tool call, or the answer to write. `said` is the last message
    when it is the user's, `tool_output` when it is a tool's; `earlier` the user's earlier
    messages, `seen` the number of messages in the conversation."""
    if tool_output is not None:
        return f"The tool said: {tool_output}. That is all I know."
    said = (said or "").strip()
    if said == "boom":
        raise ModelOverloaded(f"upstream {SECRET} refused the request")
    if said.startswith("tool "):
        return ToolCall("lookup", said[5:])
    if said in ("slowtool", "interview"):
        return ToolCall("slow_lookup" if said == "slowtool" else "ask_name", "anything")
    if said == "recall":
        return "Earlier you said: " + " | ".join(earlier)
    if said == "long":
        return LONG_TEXT
    return f"You said: {said}. I have seen {seen} messages in this thread so far."


async def words(answer: str) -> AsyncIterator[str]:
    """The answer word by word (each after the first with its leading space), one per DELAY;
    LONG_ANSWER sees the long one start and end (or be closed)."""
    watch = LONG_ANSWER if answer == LONG_TEXT else ToolWatch()
    watch.started.set()
    try:
        for i, word in enumerate(answer.split(" ")):
            await asyncio.sleep(DELAY)
            yield word if i == 0 else " " + word
    finally:
        watch.ended.set()


async def lookup(query: str) -> str:
    """Look a word up in the scripted encyclopedia."""
    await asyncio.sleep(0.01)
    return f"{query} is a word"


async def slow_lookup(query: str) -> str:
    """Look something up, slowly."""
    SLOW_TOOL.started.set()
    try:
        await asyncio.sleep(60)
    finally:
        SLOW_TOOL.ended.set()
    return "too late"
