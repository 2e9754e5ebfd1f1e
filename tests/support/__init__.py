"""What the test tiers share, written once.

    processes    free ports; start a process, wait for its ports, terminate it (kill on timeout)
    messages     a user message and SendMessage params in ProtoJSON; the message and a
                 SendMessageRequest in protobuf
    template     a synthesized CloudFormation template read by type, handler and property
    errors       read a google.rpc.Status (ErrorInfo, BadRequest) from a JSON-RPC error body
                 or a gRPC trailer
    webhooks     a real webhook receiver (HTTP/HTTPS, planned answers, down) and a test CA
    harness      the core over a MemoryStore, and the one place a test starts the gRPC binding
    event_filter whether a Lambda event filter pattern (the subset the stack uses: exact
                 values, prefix) lets a record through, e.g. infra.push_filter's pattern
    cancels      how fast a cancel stops an agent in the kit's terms: the store's writes and
                 looks at the task after the cancel, and how late the loop's timers fire

Binding-specific clients stay with their tests (tests/jsonrpc/client.py).
"""
