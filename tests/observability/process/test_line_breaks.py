"""Every log record is one line, whatever text it carries (issue 33, item 8): JSON escapes
control characters, but U+0085, U+2028 and U+2029 are line breaks to Python's `splitlines`
and to some log shippers, and the formatter writes non-ASCII text as it is. Through the real
container process, with an agent that logs what it was sent, as agents do."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2akit.agent import RequestContext, TaskHandle
from a2akit.generated import a2a_pb2 as pb
from tests.execution.processes import container, kit_env
from tests.observability.lines import json_lines
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.slow

BREAKS = "\u0085\u2028\u2029"


class LoggingAgent:
    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        context.log.info("asked: %s", context.text)
        await task.complete("done")


agent = LoggingAgent()


def test_text_with_unicode_line_breaks_stays_on_one_log_line(ddb_endpoint: str,
                                                             tmp_path: Path) -> None:
    env = kit_env(ddb_endpoint, f"{__name__}:agent")
    log = tmp_path / "grpc.log"
    text = f"a{BREAKS}b é"
    with container(env, log) as (_, stub):
        task = stub.SendMessage(send_request(text), metadata=V1).task
        assert task.status.state == pb.TASK_STATE_COMPLETED
    written = log.read_text()
    assert not any(ch in written for ch in BREAKS), "written raw"
    lines, other = json_lines(log)
    assert other == []
    assert [line["message"] for line in lines if line.get("message", "").startswith("asked")] == [
        f"asked: {text}"]
