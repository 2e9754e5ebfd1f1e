"""The gRPC binding (spec section 10): a grpc.aio server over the shared core."""

from grpc_service.server import SERVICE_NAME, serve

__all__ = ["SERVICE_NAME", "serve"]
