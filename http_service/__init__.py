"""The HTTP bindings (spec sections 9 and 11, and A2A 0.3's JSON-RPC) as one Starlette app over
the shared core: `http_service.app.create_app`. Every request goes through one pipeline
(`http_service.pipeline.answer`); the bindings differ only in how they read a request and
write its answer (`http_service.jsonrpc`, `http_service.jsonrpc03`, `http_service.rest`)."""
