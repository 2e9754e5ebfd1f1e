"""Fixtures for the gRPC binding tests; the helpers live in grpc_support."""

from grpc_support import anyio_backend, grpc_env, start

__all__ = ["anyio_backend", "grpc_env", "start"]
