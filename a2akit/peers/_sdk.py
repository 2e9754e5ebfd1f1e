"""The official A2A client (`a2a-sdk`, the `peers` extra), loaded beside the kit's messages.

Both ship protobuf code generated from the same A2A contract (`a2a.proto`, package
`lf.a2a.v1`; `a2a_v0_3.proto`, package `a2a.v1`), and both register it in protobuf's one
default descriptor pool, which refuses a second, different file of the same name: in one
process, whichever loads second fails ("duplicate file name" / "conflicting"). The kit's
messages are loaded first in every kit process (its bindings and core are built on them).
So before the SDK's first import, its two generated modules are made the kit's: the SDK then
builds, sends and parses the kit's message classes.

That is sound because the two generations describe the same messages: the same names,
numbers, types and oneofs, and the same services. They differ only in what never reaches the
wire: file options (java_package...), `json_name` entries left out where they equal the
default, how an option is encoded, and (0.3 only) the `google.api` annotations some fields
and methods carry. tests/peers/process/test_sdk.py compares the two for the pinned SDK, so a release
that drifts fails there first.

Import `a2a` only through this module (or `a2akit.peers.load_sdk()`), and after the kit:
imported before the kit's messages, the SDK's own would be registered and the kit's could
not load.
"""

from __future__ import annotations

import importlib.util
import sys

from a2akit.generated import a2a_pb2, a2a_v0_3_pb2

__all__ = ["load"]

_STAND_INS = {
    "a2a.types.a2a_pb2": a2a_pb2,
    "a2a.compat.v0_3.a2a_v0_3_pb2": a2a_v0_3_pb2,
}


def load() -> None:
    """Make `import a2a...` safe in this process. Raises ImportError with the install command
    when the SDK is missing, or naming the module when the SDK's own messages got in first."""
    if importlib.util.find_spec("a2a") is None:
        raise ImportError("a2akit.peers needs the peers extra (the official A2A client): "
                          "pip install 'a2a-aws-kit[peers]'")
    for name, module in _STAND_INS.items():
        if sys.modules.setdefault(name, module) is not module:
            raise ImportError(f"{name} was imported before a2akit.peers: import the A2A SDK "
                              "only after a2akit.peers.load_sdk()")
