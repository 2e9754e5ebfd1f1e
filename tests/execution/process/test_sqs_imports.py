"""A queue-mode door on Lambda sends through the kit's SQS client and loads no botocore (a fresh
interpreter)."""

from __future__ import annotations

import pytest

from tests.execution.test_sqs_client import ENV
from tests.support.processes import fresh_python

pytestmark = pytest.mark.slow


def test_a_queue_mode_door_on_lambda_loads_no_botocore(moto_endpoint: str,
                                                        ddb_endpoint: str) -> None:
    code = ("import sys, handlers.jsonrpc; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('botocore', 'boto3')))")
    assert fresh_python(code, {
        **ENV, "PATH": "", "A2A_ALLOW_ANONYMOUS": "true", "A2A_EXECUTION": "queue",
        "A2A_TABLE": "kit-client-door", "A2A_QUEUE_URL": f"{moto_endpoint}/123456789012/q",
        "AWS_ENDPOINT_URL_SQS": moto_endpoint, "AWS_ENDPOINT_URL_DYNAMODB": ddb_endpoint,
        "AWS_LAMBDA_FUNCTION_NAME": "door"}) == "[]"
