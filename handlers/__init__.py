"""Lambda entry points. `handlers.jsonrpc.handler` serves JSON-RPC; it never imports grpc."""
