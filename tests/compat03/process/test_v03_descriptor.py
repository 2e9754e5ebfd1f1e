"""The compiled 0.3 contract (proto/a2a_v0_3.proto, package a2a.v1) is the reference SDK's:
a2a-sdk's `a2a.compat.v0_3.a2a_v0_3_pb2`, read in its own venv, has the same messages with the
same fields (names, numbers, types, labels, oneofs, JSON names), enums and rpcs. Field order
within a message is not compared (AgentCard declares its fields in another order)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support import sdk

pytestmark = pytest.mark.slow

# Runs in both interpreters: the kit's and the SDK venv's (so it imports nothing of either).
DUMP = '''
import importlib, json, sys
from google.protobuf.descriptor import FieldDescriptor

def fields(message):
    return sorted([f.number, f.name, f.type, f.is_repeated, f.has_presence,
                   f.containing_oneof.name if f.containing_oneof else None, f.json_name,
                   (f.message_type or f.enum_type).full_name
                   if f.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_ENUM)
                   else None]
                  for f in message.fields)

def messages(container, out):
    for message in container.message_types_by_name.values() if hasattr(
            container, "message_types_by_name") else container.nested_types:
        out[message.full_name] = fields(message)
        messages(message, out)
    return out

module = importlib.import_module(sys.argv[1])
file = module.DESCRIPTOR
print(json.dumps({
    "name": file.name, "package": file.package,
    "messages": messages(file, {}),
    "enums": {e.full_name: sorted([v.number, v.name] for v in e.values)
              for e in file.enum_types_by_name.values()},
    "services": {s.full_name: sorted([m.name, m.input_type.full_name, m.output_type.full_name,
                                      m.server_streaming, m.client_streaming]
                                     for m in s.methods)
                 for s in file.services_by_name.values()},
}))
'''


@pytest.fixture(scope="module")
def sdk_python() -> Path:
    return sdk.sdk_python("import a2a.compat.v0_3.a2a_v0_3_pb2")


def _dump(python: Path | str, module: str) -> dict[str, Any]:
    run = subprocess.run([str(python), "-c", DUMP, module], capture_output=True, text=True,
                         timeout=120, check=True)
    dumped: dict[str, Any] = json.loads(run.stdout)
    return dumped


def test_the_03_descriptor_matches_the_reference_sdk(sdk_python: Path) -> None:
    import sys

    ours = _dump(sys.executable, "a2akit.generated.a2a_v0_3_pb2")
    theirs = _dump(sdk_python, "a2a.compat.v0_3.a2a_v0_3_pb2")
    assert (ours["name"], ours["package"]) == (theirs["name"], theirs["package"]) == (
        "a2a_v0_3.proto", "a2a.v1")
    assert ours["messages"].keys() == theirs["messages"].keys()
    for name, fields in theirs["messages"].items():
        assert ours["messages"][name] == fields, name
    assert ours["enums"] == theirs["enums"]
    assert ours["services"] == theirs["services"]
    assert len(ours["services"]["a2a.v1.A2AService"]) == 10
