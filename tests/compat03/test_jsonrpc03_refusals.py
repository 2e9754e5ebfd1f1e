"""The 0.3 JSON-RPC binding's refusals: version routing (0.3 methods without a header or with 0.3,
other versions refused, unknown methods) and bad 0.3 input named by its field."""

from __future__ import annotations

from typing import Any

import pytest

from tests.compat03.client03 import Caller03, message03
from tests.compat03.conftest import REFUSED_BEFORE_THE_STORE
from tests.support.messages import user_message


@pytest.mark.parametrize("version", [None, "", "0.3", "0.3.0"])
@pytest.mark.spec(
    "1.0 3.6.2", "MUST", "0.3 methods are served without A2A-Version or with 0.3", generation="0.3")
def test_03_methods_are_served_without_a_header_or_with_03(rpc: Caller03,
                                                            version: str | None) -> None:
    headers = {} if version is None else {"A2A-Version": version}
    assert rpc.result("message/send", {"message": message03()}, headers=headers)["kind"] == (
        "task")


@REFUSED_BEFORE_THE_STORE
@pytest.mark.parametrize("version", ["1.0", "1.2", "2", "INVALID"])
def test_03_methods_with_another_version_are_version_not_supported(rpc: Caller03,
                                                                   version: str) -> None:
    error = rpc.error("tasks/get", {"id": "x"}, headers={"A2A-Version": version})
    assert error["code"] == -32009 and error["data"]["reason"] == "VERSION_NOT_SUPPORTED"


@REFUSED_BEFORE_THE_STORE
def test_a_10_method_without_a_header_is_version_not_supported(rpc: Caller03) -> None:
    answer = rpc.call("SendMessage", {"message": user_message()}).json()
    assert answer["error"]["code"] == -32009


@REFUSED_BEFORE_THE_STORE
@pytest.mark.parametrize("method", ["tasks/list", "message/sendx", "a/b", "tasks/",
                                    "agent/authenticatedExtendedCard"])
@pytest.mark.spec("0.3 8.1", "MUST", "An unknown method is -32601", generation="0.3")
def test_unknown_slash_methods_are_method_not_found(rpc: Caller03, method: str) -> None:
    error = rpc.error(method, {"id": "x"})
    assert error["code"] == -32601 and error["data"]["method"] == method


# --- bad 0.3 input --------------------------------------------------------------------------


def _send_with(**message: Any) -> dict[str, Any]:
    return {"message": {**message03(), **message}}


@pytest.mark.parametrize(("method", "params", "field"), [
    ("message/send", {}, "message"),
    ("message/send", {"message": "hi"}, "message"),
    ("message/send", _send_with(kind="task"), "message.kind"),
    ("message/send", _send_with(role="ROLE_USER"), "message.role"),
    ("message/send", _send_with(messageId=7), "message.messageId"),
    ("message/send", _send_with(messageId=""), "message.messageId"),
    ("message/send", _send_with(parts={"kind": "text"}), "message.parts"),
    ("message/send", _send_with(parts=["x"]), "message.parts[0]"),
    ("message/send", _send_with(parts=[{"kind": "image"}]), "message.parts[0].kind"),
    ("message/send", _send_with(parts=[{"kind": "text"}]), "message.parts[0].text"),
    ("message/send", _send_with(parts=[{"foo": 1}]), "message.parts[0].kind"),
    ("message/send", _send_with(parts=[{"kind": "file", "file": {"bytes": "a$b="}}]),
     "message.parts[0].file.bytes"),
    ("message/send", _send_with(parts=[{"kind": "file", "file": {"bytes": "aGk"}}]),
     "message.parts[0].file.bytes"),
    ("message/send", _send_with(parts=[{"kind": "file", "file": {}}]), "message.parts[0].file"),
    ("message/send", _send_with(parts=[{"kind": "file", "file": {"bytes": "aGk=",
                                                                  "uri": "https://a/"}}]),
     "message.parts[0].file"),
    ("message/send", _send_with(parts=[{"kind": "data", "data": [1, 2]}]),
     "message.parts[0].data"),
    ("message/send", _send_with(parts=[{"kind": "data", "data": "x"}]),
     "message.parts[0].data"),
    ("message/send", _send_with(metadata=[1]), "message.metadata"),
    ("message/send", _send_with(referenceTaskIds="t"), "message.referenceTaskIds"),
    ("message/send", {"message": message03(), "configuration": {"blocking": "yes"}},
     "configuration.blocking"),
    ("message/send", {"message": message03(), "configuration": {"historyLength": 1.5}},
     "configuration.historyLength"),
    ("message/send", {"message": message03(), "configuration": {"historyLength": True}},
     "configuration.historyLength"),
    ("message/send", {"message": message03(),
                      "configuration": {"pushNotificationConfig": {"id": "x"}}},
     "configuration.pushNotificationConfig.url"),
    ("tasks/get", {}, "id"),
    ("tasks/get", {"id": 5}, "id"),
    ("tasks/get", {"id": "a/b"}, "id"),
    ("tasks/cancel", {"id": None}, "id"),
    ("tasks/pushNotificationConfig/set", {"taskId": "t"}, "pushNotificationConfig"),
    ("tasks/pushNotificationConfig/set", {"taskId": "t", "pushNotificationConfig": {
        "url": "https://a.b/", "authentication": {"schemes": "Bearer"}}},
     "pushNotificationConfig.authentication.schemes"),
    ("tasks/pushNotificationConfig/delete", {"id": "t"}, "pushNotificationConfigId"),
])
@REFUSED_BEFORE_THE_STORE
def test_bad_03_input_is_invalid_params_naming_the_field(rpc: Caller03, method: str,
                                                         params: dict[str, Any],
                                                         field: str) -> None:
    error = rpc.error(method, params)
    assert error["code"] == -32602, error
    assert error["data"]["errors"][0]["field"] == field, error
    assert field in error["message"]


@REFUSED_BEFORE_THE_STORE
@pytest.mark.parametrize("params", [[], "x", 3])
def test_params_that_are_not_an_object_are_invalid_params(rpc: Caller03, params: Any) -> None:
    assert rpc.error("tasks/get", params)["code"] == -32602
