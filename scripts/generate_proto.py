"""Generate the Python code of proto/a2a.proto (A2A 1.0, `lf.a2a.v1`) and of
proto/a2a_v0_3.proto (A2A 0.3, `a2a.v1`): messages, type stubs, gRPC stubs.

Messages go to the core package (a2akit/generated), service stubs to grpc_service/generated.
Run `python scripts/generate_proto.py`; tests/core/test_generated.py regenerates into a temporary
folder and fails when the committed files differ.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "proto"
MESSAGES_DIR = pathlib.PurePosixPath("a2akit/generated")
STUBS_DIR = pathlib.PurePosixPath("grpc_service/generated")
PROTOS = ("a2a", "a2a_v0_3")


def generate(out_root: pathlib.Path) -> list[pathlib.PurePosixPath]:
    """Write the generated files under out_root; return their paths relative to it."""
    import google.api
    import grpc_tools
    from grpc_tools import protoc

    googleapis = pathlib.Path(google.api.__path__[0]).parent.parent
    well_known = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "protoc",
            f"-I{PROTO_DIR}",
            f"-I{well_known}",
            f"-I{googleapis}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            *(f"{name}.proto" for name in PROTOS),
        ]
        if protoc.main(args) != 0:
            raise RuntimeError("protoc failed on proto/")
        produced = pathlib.Path(tmp)
        outputs = {}
        for name in PROTOS:
            # protoc writes `import a2a_pb2`; the messages live in the core package instead.
            alias = name.replace("_", "__") + "__pb2"
            stub_import = f"import {name}_pb2 as {alias}"
            package_import = f"from a2akit.generated import {name}_pb2 as {alias}"
            outputs[MESSAGES_DIR / f"{name}_pb2.py"] = (produced / f"{name}_pb2.py").read_text()
            outputs[MESSAGES_DIR / f"{name}_pb2.pyi"] = (produced / f"{name}_pb2.pyi").read_text()
            outputs[STUBS_DIR / f"{name}_pb2_grpc.py"] = (
                (produced / f"{name}_pb2_grpc.py").read_text()
                .replace(stub_import, package_import))
    for rel, text in outputs.items():
        target = out_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return list(outputs)


if __name__ == "__main__":
    for path in generate(ROOT):
        print("wrote", path)
    sys.exit(0)
