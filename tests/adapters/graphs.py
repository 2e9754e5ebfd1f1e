"""Real LangGraph graphs on a scripted chat model, for the adapter's tests and for kit processes
started by them (`A2A_AGENT=tests.adapters.graphs:agent`, `...:interviewer`).

The model is langchain_core's GenericFakeChatModel answering by rule instead of from a list
(a list would be shared by every test of a process), streaming its answer one word per
TOKEN_DELAY_SECONDS (environment, read at import; default 0.05):

    "tool X"     asks for the `lookup` tool with X; after the tool, answers with its result
    "slowtool"   asks for `slow_lookup`, which waits a minute unless cancelled
    "boom"       raises ModelOverloaded, whose text holds what must not reach a caller
    "recall"     answers with every earlier human message of the thread
    "long"       writes 400 words (20 s), unless cancelled
    anything     "You said: <text>. I have seen <n> messages in this thread so far."
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from a2akit.adapters.langgraph import LangGraphAgent

DELAY_ENV = "TOKEN_DELAY_SECONDS"
SECRET = "sk-live-123 at 10.1.2.3"  # in the model's exception text: never in a task



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


class ScriptedChatModel(GenericFakeChatModel):
    messages: Any = iter(())  # unused: the answer comes from the rules above
    delay: float = float(os.environ.get(DELAY_ENV, "0.05"))

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        last = messages[-1]
        said = last.text.strip()
        if isinstance(last, HumanMessage) and said == "boom":
            raise ModelOverloaded(f"upstream {SECRET} refused the request")
        if isinstance(last, HumanMessage) and said.startswith(("tool ", "slowtool")):
            name, query = (("lookup", said[5:]) if said.startswith("tool ")
                           else ("slow_lookup", "anything"))
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[{
                "name": name, "args": f'{{"query": "{query}"}}', "id": f"call-{name}",
                "index": 0}]))
            return
        if isinstance(last, ToolMessage):
            answer = f"The tool said: {last.text}. That is all I know."
        elif said == "recall":
            earlier = [m.text for m in messages[:-1] if isinstance(m, HumanMessage)]
            answer = "Earlier you said: " + " | ".join(earlier)
        elif said == "long":
            answer = " ".join(["word"] * 400)
        else:
            answer = (f"You said: {said}. I have seen {len(messages)} messages in this "
                      "thread so far.")
        watch = LONG_ANSWER if said == "long" else ToolWatch()
        watch.started.set()
        try:
            for i, word in enumerate(answer.split(" ")):
                await asyncio.sleep(self.delay)
                # BaseChatModel passes each chunk on to the callbacks (LangGraph's "messages").
                yield ChatGenerationChunk(message=AIMessageChunk(
                    content=word if i == 0 else " " + word))
        finally:
            watch.ended.set()


@tool
async def lookup(query: str) -> str:
    """Look a word up in the scripted encyclopedia."""
    await asyncio.sleep(0.01)
    return f"{query} is a word"


@tool
async def slow_lookup(query: str) -> str:
    """Look something up, slowly."""
    SLOW_TOOL.started.set()
    try:
        await asyncio.sleep(60)
    finally:
        SLOW_TOOL.ended.set()
    return "too late"


def chat_graph() -> Any:
    """A tool-calling chat graph (agent <-> tools), compiled without a checkpointer."""
    model = ScriptedChatModel()

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([lookup, slow_lookup]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(name="Scripted chat")


def interview_graph() -> Any:
    """Asks for a name with `interrupt`, then the model answers to it."""
    model = ScriptedChatModel()

    def ask(state: MessagesState) -> dict[str, Any]:
        name = interrupt("What is your name?")
        return {"messages": [HumanMessage(f"My name is {name}")]}

    async def answer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_node("answer", answer)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="Interviewer")


def make_agent() -> LangGraphAgent:
    return LangGraphAgent(chat_graph(), description="A scripted LangGraph chat with tools.")


def make_interviewer() -> LangGraphAgent:
    return LangGraphAgent(interview_graph())


# What kit processes serve (A2A_AGENT); the checkpointer follows their environment.
agent = make_agent()
interviewer = make_interviewer()

__all__ = ["DELAY_ENV", "LONG_ANSWER", "SECRET", "SLOW_TOOL", "ModelOverloaded",
           "ScriptedChatModel", "ToolWatch", "agent", "chat_graph", "interview_graph",
           "interviewer", "make_agent", "make_interviewer"]
