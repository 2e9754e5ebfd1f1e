"""How many of the kit's source files one warm SendMessage crosses, on each binding.

    .venv/bin/python bench/files_crossed.py [--against CHECKOUT]

Each binding is called once to warm up, then once under `sys.setprofile`, which records the
file of every Python function called; the kit's own files (a2akit/, http_service/,
handlers/, grpc_service/; generated code left out) are counted. JSON-RPC and HTTP+JSON go
through the real Mangum handler with the API Gateway event, gRPC through a grpc.aio server and
client on loopback, in one process (echo agent, embedded store, anonymous callers).
`--against` counts another checkout of the kit the same way (say `git worktree add
/tmp/before HEAD~1`), each in its own interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVENT = ROOT / "tests" / "events" / "apigw_http_v2.json"
KIT_DIRS = ("a2akit", "http_service", "handlers", "grpc_service")

PROBE = r'''
import asyncio, json, os, sys, uuid
root = sys.argv[1]
sys.path.insert(0, root)
os.environ.update({"A2A_ALLOW_ANONYMOUS": "true", "A2A_TABLE": "", "A2A_PUBLIC_URL": "http://127.0.0.1/"})
KIT = tuple(os.path.join(root, d) + os.sep for d in %(dirs)r)


def crossed(call):
    files = set()

    def profile(frame, event, arg):
        name = frame.f_code.co_filename
        if event == "call" and name.startswith(KIT) and "generated" not in name:
            files.add(os.path.relpath(name, root))

    call()
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return sorted(files)


from handlers.jsonrpc import handler


def lambda_event(body, path="/", method="POST"):
    event = json.load(open(%(event)r))
    event["headers"]["a2a-version"] = "1.0"
    event["body"] = json.dumps(body)
    event["rawPath"] = path
    event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    return event


class Context:
    aws_request_id = "r-1"
    def get_remaining_time_in_millis(self):
        return 60_000


def message():
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}


def jsonrpc():
    reply = handler(lambda_event({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                  "params": {"message": message()}}), Context())
    assert "TASK_STATE_COMPLETED" in reply["body"], reply


def rest():
    reply = handler(lambda_event({"message": message()}, "/message:send"), Context())
    assert "TASK_STATE_COMPLETED" in reply["body"], reply


def grpc_call():
    import grpc
    from a2akit.generated import a2a_pb2 as pb
    from a2akit.settings import Settings
    from grpc_service import server

    async def main():
        running = await server.serve(Settings(allow_anonymous=True), port=0, host="127.0.0.1")
        port = getattr(running, "port", None) or running.bound_port
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.unary_unary("/lf.a2a.v1.A2AService/SendMessage",
                                       request_serializer=pb.SendMessageRequest.SerializeToString,
                                       response_deserializer=pb.SendMessageResponse.FromString)

            async def once():
                request = pb.SendMessageRequest(message=pb.Message(
                    message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text="hi")]))
                reply = await call(request, metadata=(("a2a-version", "1.0"),))
                assert reply.task.status.state == pb.TASK_STATE_COMPLETED

            await once()
            files = set()

            def profile(frame, event, arg):
                name = frame.f_code.co_filename
                if event == "call" and name.startswith(KIT) and "generated" not in name:
                    files.add(os.path.relpath(name, root))

            sys.setprofile(profile)
            try:
                await once()
            finally:
                sys.setprofile(None)
        await running.shutdown(0)
        return sorted(files)

    return asyncio.run(main())


print(json.dumps({"JSON-RPC": crossed(jsonrpc), "HTTP+JSON": crossed(rest),
                  "gRPC": grpc_call()}))
'''


def count(root: Path) -> dict[str, list[str]]:
    code = PROBE % {"dirs": KIT_DIRS, "event": str(EVENT)}
    out = subprocess.run([sys.executable, "-c", code, str(root)], check=True, cwd=root,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    result: dict[str, list[str]] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", type=Path, help="another checkout to count too")
    parser.add_argument("--list", action="store_true", help="print the files, not only counts")
    args = parser.parse_args()
    now = count(ROOT)
    before = count(args.against.resolve()) if args.against else None
    for binding, files in now.items():
        line = f"{binding:10} {len(files):3} files"
        if before is not None:
            line += f"   (against: {len(before[binding])})"
        print(line)
        if args.list:
            print("  " + "\n  ".join(files))


if __name__ == "__main__":
    main()
