"""The 0.3 tests run on the fixtures of the bindings and of push they extend: the gRPC ones
(`start03` on both stores) and push's receivers, tables and dead-letter queue."""

from tests.grpc.conftest import grpc_env, start, start03, store
from tests.push.conftest import authority, dead_letters, receiver, table_name, tls_receiver

__all__ = ["authority", "dead_letters", "grpc_env", "receiver", "start", "start03", "store",
           "table_name", "tls_receiver"]
