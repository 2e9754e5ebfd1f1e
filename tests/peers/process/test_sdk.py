"""The official A2A client beside the kit (a2akit/peers/_sdk.py): its generated messages
describe the kit's, so the kit's may stand in for them; with that, the SDK and the kit load in
one process, in either of the kit's processes. (That the doors load no SDK, even for an agent
that names a peer: tests/tree/process/test_layout.py.)"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from a2akit.generated import a2a_pb2, a2a_v0_3_pb2
from tests.support.processes import ROOT


def _sdk_file(relative: str) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto an SDK module would register, read from its source: importing
    it here would clash with the kit's (the point of the module under test)."""
    spec = importlib.util.find_spec("a2a")  # the top package only: its __init__ is empty
    assert spec is not None and spec.submodule_search_locations, "the peers extra is missing"
    return _registered(Path(next(iter(spec.submodule_search_locations)), relative))


def _kit_file(module: object) -> descriptor_pb2.FileDescriptorProto:
    return _registered(Path(module.__file__))  # type: ignore[attr-defined]


def _registered(path: Path) -> descriptor_pb2.FileDescriptorProto:
    """The file descriptor a generated module hands to the pool, as protoc serialized it."""
    source = path.read_text()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "AddSerializedFile"):
            argument = node.args[0]
            assert isinstance(argument, ast.Constant) and isinstance(argument.value, bytes)
            return descriptor_pb2.FileDescriptorProto.FromString(argument.value)
    raise AssertionError(f"no serialized descriptor in {path}")


def _wire(proto: descriptor_pb2.FileDescriptorProto, *,
          annotations: bool) -> descriptor_pb2.FileDescriptorProto:
    """`proto` without what never reaches the wire: file options, `json_name` (protoc leaves
    out the default one), the fields' order, options' encoding, and with `annotations=False`
    every field and method option (google.api field_behavior and http rules) and the imports
    that define them."""
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(proto)
    copy.ClearField("options")

    def strip(message: descriptor_pb2.DescriptorProto) -> None:
        for field in message.field:
            if field.json_name == _default_json_name(field.name):
                field.ClearField("json_name")
            if not annotations:
                field.ClearField("options")
            elif field.HasField("options"):
                field.options.ParseFromString(field.options.SerializeToString())
        # Declaration order is not on the wire (0.3's AgentCard declares its fields in
        # another order than the SDK's).
        fields = sorted(message.field, key=lambda field: field.number)
        message.ClearField("field")
        message.field.extend(fields)
        for nested in message.nested_type:
            strip(nested)

    for message in copy.message_type:
        strip(message)
    if not annotations:
        kept = [name for name in copy.dependency if not name.startswith("google/api/")]
        copy.ClearField("dependency")
        copy.dependency.extend(kept)
        for service in copy.service:
            for method in service.method:
                method.ClearField("options")
    return copy


def _default_json_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def test_the_sdks_10_messages_are_the_kits() -> None:
    kit, sdk = _kit_file(a2a_pb2), _sdk_file("types/a2a_pb2.py")
    assert (kit.name, kit.package) == (sdk.name, sdk.package) == ("a2a.proto", "lf.a2a.v1")
    # Field behaviors (REQUIRED) included: the SDK's validation reads them.
    assert _wire(kit, annotations=True) == _wire(sdk, annotations=True)


def test_the_sdks_03_messages_are_the_kits_on_the_wire() -> None:
    kit, sdk = _kit_file(a2a_v0_3_pb2), _sdk_file("compat/v0_3/a2a_v0_3_pb2.py")
    assert (kit.name, kit.package) == (sdk.name, sdk.package) == ("a2a_v0_3.proto", "a2a.v1")
    assert _wire(kit, annotations=False) == _wire(sdk, annotations=False)


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                          capture_output=True, text=True,
                          env={"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""}).stdout


@pytest.mark.parametrize("kit_process", ["handlers.jsonrpc", "grpc_service.server"])
def test_the_sdk_loads_in_a_kit_process(kit_process: str) -> None:
    """The gRPC container has the 0.3 messages loaded too (grpc_service.compat03), and the
    SDK's client imports its own 0.3 transport: both generations must be stood in for."""
    out = _run(f"import {kit_process}, grpc_service.compat03, a2akit.peers as p; p.load_sdk(); "
               "import a2a.client, a2a.client.transports.grpc, a2a.types; "
               "from a2akit.generated import a2a_pb2; "
               "print(a2a.types.Message is a2a_pb2.Message, "
               "a2a.client.transports.grpc.SendMessageRequest is a2a_pb2.SendMessageRequest)")
    assert out.split() == ["True", "True"]


def test_the_sdk_missing_is_named_with_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from a2akit.peers import _sdk

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"pip install 'a2a-aws-kit\[peers\]'"):
        _sdk.load()
