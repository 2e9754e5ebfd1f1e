"""The committed generated code is what scripts/generate_proto.py makes from proto/ now."""

from __future__ import annotations

import pathlib

from scripts.generate_proto import ROOT, generate


def test_generated_code_is_fresh(tmp_path: pathlib.Path) -> None:
    for rel in generate(tmp_path):
        fresh = (tmp_path / rel).read_text()
        committed = (ROOT / rel).read_text()
        assert fresh == committed, f"{rel} is stale: run python scripts/generate_proto.py"


def test_wire_numbers_match_the_contract() -> None:
    from a2akit.generated import a2a_pb2 as pb

    # Spot checks of numbers that are easy to get wrong (wire-facts.md).
    assert pb.TASK_STATE_REJECTED == 7 and pb.TASK_STATE_AUTH_REQUIRED == 8
    fields = pb.ListTaskPushNotificationConfigsRequest.DESCRIPTOR.fields_by_name
    assert fields["tenant"].number == 4 and fields["task_id"].number == 1
    assert pb.AgentCapabilities.DESCRIPTOR.fields_by_name["extended_agent_card"].number == 4
    service = pb.DESCRIPTOR.services_by_name["A2AService"]
    assert service.full_name == "lf.a2a.v1.A2AService" and len(service.methods) == 11
    assert pb.DESCRIPTOR.package == "lf.a2a.v1" and len(pb.DESCRIPTOR.message_types_by_name) == 44
