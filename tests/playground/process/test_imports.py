"""Neither door loads the playground's module unless it is asked for (fresh interpreters)."""

from __future__ import annotations

from tests.support.processes import fresh_python


def test_the_doors_load_no_playground_unless_asked() -> None:
    code = ("import sys, handlers.jsonrpc, handlers.stream; "
            "print([m for m in sys.modules if 'playground' in m])")
    for value, expected in (("", "[]"), ("true", "['http_service.playground']")):
        assert fresh_python(code, {"A2A_ALLOW_ANONYMOUS": "true", "A2A_PLAYGROUND": value,
                                   "PATH": ""}) == expected
