"""Real LangGraph graphs on a scripted chat model, for the adapter's tests and for kit processes
started by them (`A2A_AGENT=tests.adapters.graphs:agent`, `...:interviewer`).

The model is langchain_core's GenericFakeChatModel answering by the rules of
tests/adapters/script.py.
"""

from __future__ import annotations

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
from tests.adapters import script
from tests.adapters.script import QUESTION, ToolCall, plan, words


class ScriptedChatModel(GenericFakeChatModel):
    messages: Any = iter(())  # unused: the answer comes from the rules of script.py
    delay: float = script.DELAY

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        last = messages[-1]
        move = plan(last.text if isinstance(last, HumanMessage) else None,
                    tool_output=last.text if isinstance(last, ToolMessage) else None,
                    earlier=[m.text for m in messages[:-1] if isinstance(m, HumanMessage)],
                    seen=len(messages))
        if isinstance(move, ToolCall):
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[{
                "name": move.name, "args": move.arguments, "id": move.call_id, "index": 0}]))
            return
        async for word in words(move):
            # BaseChatModel passes each chunk on to the callbacks (LangGraph's "messages").
            yield ChatGenerationChunk(message=AIMessageChunk(content=word))


@tool
async def lookup(query: str) -> str:
    """Look a word up in the scripted encyclopedia."""
    return await script.lookup(query)


@tool
async def slow_lookup(query: str) -> str:
    """Look something up, slowly."""
    return await script.slow_lookup(query)


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
        name = interrupt(QUESTION)
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

__all__ = ["ScriptedChatModel", "agent", "chat_graph", "interview_graph", "interviewer",
           "make_agent", "make_interviewer"]
