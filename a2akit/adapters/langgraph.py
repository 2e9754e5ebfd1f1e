"""Serve a compiled LangGraph graph as an A2A agent: `LangGraphAgent(graph)`.

    from a2akit.adapters.langgraph import LangGraphAgent
    agent = LangGraphAgent(builder.compile(), name="Researcher")   # A2A_AGENT=my_module:agent

What maps to what (docs/frameworks.md):

- A message becomes `{"messages": [HumanMessage(text)]}`, run with `graph.astream(...,
  stream_mode=["messages", "updates"])` on the thread named by the A2A contextId, so the
  checkpointer carries the conversation from one task of a context to the next.
- "messages": the text of AI messages (streamed token by token, or written whole by a node)
  becomes one artifact sent in chunks; tool and human messages never do.
- "updates": a node asking for tools, a tool's answer and any node that wrote no text become
  WORKING status updates with a short message; `__interrupt__` ends the turn INPUT_REQUIRED
  with the interrupt's value as the question. The next message on that task resumes the same
  run with `Command(resume=text)`.
- An exception from the graph ends the task FAILED naming the exception's type; cancelling
  the task cancels `astream`, which cancels the node (a model call, an async tool) it awaits.

Checkpoints: the graph's own checkpointer when it was compiled with one; otherwise
`default_checkpointer()`: a DynamoDB table when A2A_LANGGRAPH_CHECKPOINT_TABLE is set
(langgraph-checkpoint-aws's DynamoDBSaver), else in memory (InMemorySaver, this process only).

Requires the `langgraph` extra; importing this module without it raises ImportError saying
what to install.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

try:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.pregel import Pregel
    from langgraph.types import Command, Interrupt
except ImportError as exc:  # pragma: no cover - the extra is installed wherever tests run
    raise ImportError("a2akit.adapters.langgraph needs the langgraph extra: "
                      "pip install 'a2a-aws-kit[langgraph]'") from exc

from a2akit.adapters._stream import TurnStream, framework_errors, question_text
from a2akit.agent import RequestContext, TaskHandle
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import ENV, Settings

__all__ = ["CHECKPOINT_TABLE_KEYS", "LangGraphAgent", "default_checkpointer", "tool_skills"]

FRAMEWORK = "LangGraph"
# The table DynamoDBSaver reads and writes: string keys PK and SK, TTL attribute `ttl`.
CHECKPOINT_TABLE_KEYS = ("PK", "SK")
_TTL_ATTRIBUTE = "ttl"
_INTERRUPT = "__interrupt__"


class LangGraphAgent:
    """A compiled graph (`StateGraph(...).compile()`, `create_react_agent(...)`) as an agent.

    The graph's state must take a `messages` list (MessagesState, or any state with an
    `add_messages` channel of that name): each A2A message is added to it as a HumanMessage.

    `skills`: the card's skills as declared; when none are given, one skill per tool of the
    graph's ToolNodes (name and description of the tool), and the kit's default skill when
    the graph has no ToolNode. `checkpointer` is used when the graph was compiled without one
    (default: `default_checkpointer()`). `recursion_limit` bounds the steps of one turn
    (LangGraph's default when None)."""

    def __init__(
        self,
        graph: Pregel[Any, Any, Any, Any],
        *,
        name: str | None = None,
        description: str = "",
        version: str = "0.1.0",
        skills: Sequence[pb.AgentSkill] | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        recursion_limit: int | None = None,
    ) -> None:
        self.name = name or graph.name
        self.description = description
        self.version = version
        self.skills = list(skills) if skills is not None else tool_skills(graph)
        if not isinstance(graph.checkpointer, BaseCheckpointSaver):
            # Interrupts and multi-turn need one; compiled without, the graph gets ours.
            saver = checkpointer if checkpointer is not None else default_checkpointer()
            graph = graph.copy(update={"checkpointer": saver})
        self.graph = graph
        self._recursion_limit = recursion_limit

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        config: RunnableConfig = {"configurable": {"thread_id": context.context_id}}
        if self._recursion_limit is not None:
            config["recursion_limit"] = self._recursion_limit
        await task.working()
        async with framework_errors(task, FRAMEWORK, context.log):
            run_input: Any = {"messages": [HumanMessage(context.text,
                                                        id=context.message.message_id)]}
            if context.task is not None and (
                    context.task.status.state == pb.TASK_STATE_INPUT_REQUIRED):
                pending = (await self.graph.aget_state(config)).interrupts
                if not pending:
                    # An in-memory checkpoint stays in the process that wrote it.
                    await task.fail("This conversation's checkpoint is gone, so the graph "
                                    "cannot resume; send the request again")
                    return
                run_input = Command(resume=_resume_value(pending, context.text))
            turn = TurnStream(task)
            interrupts = await _stream(self.graph, run_input, config, turn)
            await turn.finish()
            if interrupts:
                await task.ask_input("\n".join(question_text(i.value) for i in interrupts))
            else:
                await task.complete()

async def _stream(graph: Pregel[Any, Any, Any, Any], run_input: Any, config: RunnableConfig,
                  turn: TurnStream) -> list[Interrupt]:
    """Run one turn of `graph`, reporting to `turn`; returns the interrupts it stopped at."""
    interrupts: list[Interrupt] = []
    talked: set[str] = set()  # nodes whose text went into the artifact
    async for chunk in graph.astream(run_input, config, stream_mode=["messages", "updates"]):
        # With a list of modes each item is (mode, data).
        mode, data = cast(tuple[str, Any], chunk)
        if mode == "messages":
            message, metadata = data
            if isinstance(message, AIMessage) and message.text:
                talked.add(str(metadata.get("langgraph_node", "")))
                await turn.text(message.text, message=message.id)
        elif mode == "updates":
            for node, update in data.items():
                if node == _INTERRUPT:
                    interrupts.extend(update)
                    continue
                for line in _steps(node, update, talked):
                    await turn.step(line)
    return interrupts


def _steps(node: str, update: Any, talked: set[str]) -> list[str]:
    """The status lines of one node's update: tools asked for, tools answered, or the node's
    name when it neither wrote text nor touched a tool."""
    lines = []
    for message in _messages(update):
        if isinstance(message, AIMessage) and message.tool_calls:
            names = ", ".join(call["name"] for call in message.tool_calls)
            lines.append(f"Calling {names}")
        elif isinstance(message, ToolMessage):
            verb = "failed" if message.status == "error" else "answered"
            lines.append(f"{message.name or 'a tool'} {verb}")
    if not lines and node not in talked and not node.startswith("__"):
        lines.append(f"Step {node} done")
    return lines


def _messages(update: Any) -> Iterable[BaseMessage]:
    if not isinstance(update, Mapping):
        return ()
    value = update.get("messages", ())
    items = value if isinstance(value, list | tuple) else [value]
    return [item for item in items if isinstance(item, BaseMessage)]


def _resume_value(pending: Sequence[Interrupt], text: str) -> Any:
    # One interrupt takes the answer itself; several (parallel nodes) each take the same
    # answer, by id, as LangGraph requires for more than one.
    if len(pending) == 1:
        return text
    return {interrupt.id: text for interrupt in pending}


def tool_skills(graph: Pregel[Any, Any, Any, Any]) -> list[pb.AgentSkill]:
    """One card skill per tool of the graph's ToolNodes, in node order."""
    skills: list[pb.AgentSkill] = []
    seen: set[str] = set()
    for node in graph.nodes.values():
        tools: Mapping[str, Any] = getattr(node.bound, "tools_by_name", None) or {}
        for tool_name, tool in tools.items():
            if tool_name in seen:
                continue
            seen.add(tool_name)
            skills.append(pb.AgentSkill(id=tool_name, name=tool_name,
                                        description=str(getattr(tool, "description", "")
                                                        or tool_name),
                                        tags=["tool"]))
    return skills


def default_checkpointer(settings: Settings | None = None) -> BaseCheckpointSaver[Any]:
    """The checkpointer a graph compiled without one gets: DynamoDBSaver on the table
    A2A_LANGGRAPH_CHECKPOINT_TABLE names (checkpoints expire after A2A_RETENTION_DAYS; with
    AWS_ENDPOINT_URL_DYNAMODB, a local emulator, where a missing table is created now, as the
    kit's store does at start; never on AWS), else InMemorySaver. `settings` default: the
    environment's.

    Raises ImportError when the table is set but langgraph-checkpoint-aws is missing, and
    botocore's errors when the emulator cannot be reached."""
    settings = settings if settings is not None else Settings.from_env()
    if not settings.langgraph_checkpoint_table:
        return InMemorySaver()
    try:
        from langgraph_checkpoint_aws.checkpoint.dynamodb import DynamoDBSaver
    except ImportError as exc:  # pragma: no cover - part of the extra
        raise ImportError(f"{ENV.LANGGRAPH_CHECKPOINT_TABLE} needs langgraph-checkpoint-aws: "
                          "pip install 'a2a-aws-kit[langgraph]'") from exc
    saver = DynamoDBSaver(table_name=settings.langgraph_checkpoint_table,
                          endpoint_url=settings.dynamodb_endpoint,
                          ttl_seconds=settings.retention_days * 86400)
    if settings.dynamodb_endpoint:
        _create_table_if_missing(saver.client, settings.langgraph_checkpoint_table)
    checkpointer: BaseCheckpointSaver[Any] = saver
    return checkpointer


_CREATE_LOCK = threading.Lock()


def _create_table_if_missing(client: Any, name: str) -> None:
    """The checkpoint table on a local emulator, with its TTL, unless it exists."""
    with _CREATE_LOCK:
        try:
            client.describe_table(TableName=name)
            return
        except client.exceptions.ResourceNotFoundException:
            pass
        try:
            client.create_table(
                TableName=name, BillingMode="PAY_PER_REQUEST",
                KeySchema=[{"AttributeName": CHECKPOINT_TABLE_KEYS[0], "KeyType": "HASH"},
                           {"AttributeName": CHECKPOINT_TABLE_KEYS[1], "KeyType": "RANGE"}],
                AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}
                                      for key in CHECKPOINT_TABLE_KEYS])
        except client.exceptions.ResourceInUseException:
            return  # another process made it meanwhile, TTL and all
        client.get_waiter("table_exists").wait(TableName=name)
        client.update_time_to_live(TableName=name, TimeToLiveSpecification={
            "Enabled": True, "AttributeName": _TTL_ATTRIBUTE})

