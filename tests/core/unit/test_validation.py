"""a2akit.validation on decoded requests: which violations are reported, in which order, under
which field paths. Each check runs twice, so the per-field plans it caches on the first run
are exercised too."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from google.protobuf.message import Message

from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.limits import MAX_ID_BYTES
from a2akit.validation import check_enum_values, check_request
from tests.support.messages import send_request


def _refused(check: Callable[[Message], None], request: Message) -> InvalidParamsError:
    errors = []
    for _ in range(2):
        with pytest.raises(InvalidParamsError) as caught:
            check(request)
        errors.append(caught.value)
    assert str(errors[0]) == str(errors[1])
    return errors[0]



def test_a_valid_request_passes() -> None:
    request = send_request("hi", message_id="m-1")
    for _ in range(2):
        check_request(request)
        check_enum_values(request)


def test_missing_required_fields_are_reported_alone_before_other_violations() -> None:
    # No role and no parts (required), and a task id over the limit (a content violation).
    request = pb.SendMessageRequest(message=pb.Message(message_id="m-1",
                                                       task_id="t" * (MAX_ID_BYTES + 1)))
    error = _refused(check_request, request)
    assert error.violations == [("message.role", "required field is missing"),
                                ("message.parts", "required field is missing")]
    assert "Missing required fields: message.role, message.parts" in str(error)


def test_content_violations_are_listed_by_path() -> None:
    request = send_request(
        "hi", message_id="m-1", task_id="t" * (MAX_ID_BYTES + 1),
        parts=[pb.Part(text="ok"), pb.Part()], reference_task_ids=["r", "x" * (MAX_ID_BYTES + 1)])
    error = _refused(check_request, request)
    fields = [field for field, _ in error.violations]
    assert sorted(fields) == ["message.parts[1]", "message.reference_task_ids[1]",
                              "message.task_id"]
    assert "(and 2 more)" in str(error)


def test_undefined_enum_numbers_are_found_in_nested_and_repeated_fields() -> None:
    request = send_request("hi", message_id="m-1")
    request.message.role = 99  # type: ignore[assignment]
    assert _refused(check_enum_values, request).violations == [
        ("message.role", "is not a Role value")]
    listing = pb.ListTasksRequest()
    listing.status = 77  # type: ignore[assignment]
    assert _refused(check_enum_values, listing).violations == [
        ("status", "is not a TaskState value")]
