"""Send one SendMessage over gRPC and print the response as JSON: `./dev grpc-call hello`.

The gRPC counterpart of the README's curl line, for `./dev serve` (127.0.0.1:50051) or any
A2A 1.0 gRPC server (`--address HOST:PORT`, `--tls` for a TLS endpoint such as the stack's
load balancer); `--header 'name: value'` (repeatable) adds call metadata (credentials).
A gRPC error ends it with one line naming the status code, and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
import uuid

import grpc
from google.protobuf import json_format

from a2akit.generated import a2a_pb2 as pb
from grpc_service.generated import a2a_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"


def send(address: str, text: str, token: str | None = None, timeout: float = 30, *,
         headers: tuple[tuple[str, str], ...] = (), tls: bool = False) -> pb.SendMessageResponse:
    """One SendMessage with a fresh message id; raises grpc.RpcError on a non-OK status."""
    metadata = [("a2a-version", "1.0"), *headers]
    if token:
        metadata.append(("authorization", f"Bearer {token}"))
    request = pb.SendMessageRequest(message=pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)]))
    channel = (grpc.secure_channel(address, grpc.ssl_channel_credentials()) if tls
               else grpc.insecure_channel(address))
    with channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        response: pb.SendMessageResponse = stub.SendMessage(request, metadata=metadata,
                                                            timeout=timeout)
        return response


def _header(raw: str) -> tuple[str, str]:
    name, sep, value = raw.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected 'name: value', not {raw!r}")
    return name.strip().lower(), value.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text", help="the message text")
    parser.add_argument("--address", default=DEFAULT_ADDRESS, help="gRPC HOST:PORT")
    parser.add_argument("--tls", action="store_true", help="TLS (default: plaintext)")
    parser.add_argument("--token", help="bearer token (an entry of A2A_BEARER_TOKENS)")
    parser.add_argument("--header", action="append", default=[], type=_header,
                        help="'name: value' call metadata, repeatable (an API key, a JWT)")
    args = parser.parse_args()
    try:
        response = send(args.address, args.text, args.token, headers=tuple(args.header),
                        tls=args.tls)
    except grpc.RpcError as error:
        code = error.code()
        hint = "; is ./dev serve running?" if code == grpc.StatusCode.UNAVAILABLE else ""
        print(f"grpc-call: {code.name} from {args.address}: {error.details()}{hint}",
              file=sys.stderr)
        return 1
    print(json_format.MessageToJson(response))
    return 0


if __name__ == "__main__":
    sys.exit(main())
