"""What every framework adapter does with one run of the framework: the shared half.

- The text the model writes arrives as deltas; `TurnStream.text` sends them as chunks of one
  artifact (`append` after the first, `last_chunk` on the last), so a caller of
  SendStreamingMessage reads the answer as it is written. Text of a new message (after a tool
  call, say) continues the same artifact after a blank line.
- Tool calls and other intermediate steps are `TurnStream.step`: a TASK_STATE_WORKING status
  update with a short message, never an artifact.
- `framework_errors` ends the task FAILED when the framework raises: the message names the
  exception's type and nothing else (its text may hold a prompt, a key or a host name); the
  traceback goes to the agent's log.

Why the latest delta is held back: `last_chunk` must ride on the last chunk, and only the
next delta (or the run's end) tells that a delta was not the last. A step sends the held delta
first, so text written before a tool call is out before the call's status; should the run end
right after a step, the closing chunk is an empty text part.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from a2akit.agent import TaskHandle
from a2akit.errors import A2AError

__all__ = ["ARTIFACT_NAME", "TurnStream", "failure_text", "framework_errors", "question_text"]

ARTIFACT_NAME = "response"
# A step's status message is a line for a progress display, not a transcript.
_STEP_CHARS = 200


class TurnStream:
    """One run's text as one chunked artifact, and its steps as status updates."""

    def __init__(self, task: TaskHandle, *, name: str = ARTIFACT_NAME) -> None:
        self._task = task
        self._name = name
        self._artifact_id: str | None = None
        self._held = ""  # the latest delta: sent when the next one comes, or by finish()
        self._message: str | None = None  # the message the text so far belongs to
        self._last_step: str | None = None

    @property
    def wrote(self) -> bool:
        """Whether any text came (sent or held)."""
        return self._artifact_id is not None or bool(self._held)

    async def text(self, delta: str, *, message: str | None = None) -> None:
        """Add a delta of the answer. `message` identifies the message it belongs to (the
        framework's message id); a delta of another message starts after a blank line."""
        if not delta:
            return
        if message is not None and message != self._message:
            if self._message is not None and self.wrote:
                delta = "\n\n" + delta
            self._message = message
        if self._held:
            await self._send(self._held, last=False)
        self._held = delta

    async def step(self, text: str) -> None:
        """Report an intermediate step (a tool call, a node finished) as WORKING with `text`,
        shortened to a line; the same text twice in a row is reported once."""
        line = " ".join(text.split())
        if len(line) > _STEP_CHARS:
            line = line[:_STEP_CHARS - 1] + "…"
        if not line or line == self._last_step:
            return
        if self._held:
            await self._send(self._held, last=False)
            self._held = ""
        self._last_step = line
        await self._task.working(line)

    async def finish(self) -> None:
        """Close the artifact: its last chunk goes out with `last_chunk`. Nothing when no text
        came."""
        if self._held:
            await self._send(self._held, last=True)
            self._held = ""
        elif self._artifact_id is not None:
            await self._send("", last=True)

    async def _send(self, text: str, *, last: bool) -> None:
        self._artifact_id = await self._task.add_artifact(
            text, artifact_id=self._artifact_id, name=self._name,
            append=self._artifact_id is not None, last_chunk=last)


def question_text(value: Any) -> str:
    """What a framework's interrupt asks, as the INPUT_REQUIRED status message: text as is,
    anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str, ensure_ascii=False)


def failure_text(framework: str, exc: BaseException) -> str:
    """The FAILED status message for an exception the framework raised: its type only."""
    return f"{framework} failed: {type(exc).__name__}"


@contextlib.asynccontextmanager
async def framework_errors(task: TaskHandle, framework: str,
                           log: logging.Logger) -> AsyncIterator[None]:
    """Around a framework's run: an exception ends the task FAILED (`failure_text`) and is
    logged with its traceback; the block's exception is then not raised further.

    A2AError (an agent's deliberate refusal, or InvalidAgentResponseError from the task
    handle) and cancellation pass through: the kit's runner handles both."""
    try:
        yield
    except A2AError:
        raise
    except Exception as exc:
        log.exception("%s raised %s", framework, type(exc).__name__)
        await task.fail(failure_text(framework, exc))
