"""A2A 0.3 callers on the 1.0 endpoints: conversions between the 0.3 messages (package
`a2a.v1`, late 0.3 revision) and the 1.0 ones, and the ten 0.3 operations over the same
`Operations` (no second core, catalogue or validation).

    convert.py   messages, parts, tasks, events, requests, push configs, resource names
    card03.py    the agent card in its 0.3 form
    errors.py    0.3 error type names; the 0.3 JSON-RPC error and the 0.3 gRPC status
    card_json.py the 0.3 card as JSON, and the 0.3 keys merged into the 1.0 card
    calls.py     `Calls03`: pb03 in, pb03 out, used by both 0.3 bindings
    json03.py    the 0.3 JSON-RPC codec (0.3 schema JSON <-> pb03); `task_payload` for push

No 1.0 operation imports anything here: a binding loads it for a 0.3 request or service,
and the agent card routes on their first GET (the 1.0 card carries the 0.3 keys too).
"""
