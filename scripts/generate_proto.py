"""Generate the Python code of proto/a2a.proto (messages, type stubs, gRPC stubs).

Messages go to the core package (a2akit/generated), service stubs to grpc_service/generated.
Run `python scripts/generate_proto.py`; tests/test_generated.py regenerates into a temporary
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
# protoc writes `import a2a_pb2`; the messages live in the core package instead.
_STUB_IMPORT = "import a2a_pb2 as a2a__pb2"
_PACKAGE_IMPORT = "from a2akit.generated import a2a_pb2 as a2a__pb2"


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
            "a2a.proto",
        ]
        if protoc.main(args) != 0:
            raise RuntimeError("protoc failed on proto/a2a.proto")
        produced = pathlib.Path(tmp)
        outputs = {
            MESSAGES_DIR / "a2a_pb2.py": (produced / "a2a_pb2.py").read_text(),
            MESSAGES_DIR / "a2a_pb2.pyi": (produced / "a2a_pb2.pyi").read_text(),
            STUBS_DIR / "a2a_pb2_grpc.py": (produced / "a2a_pb2_grpc.py")
            .read_text()
            .replace(_STUB_IMPORT, _PACKAGE_IMPORT),
        }
    for rel, text in outputs.items():
        target = out_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return list(outputs)


if __name__ == "__main__":
    for path in generate(ROOT):
        print("wrote", path)
    sys.exit(0)
