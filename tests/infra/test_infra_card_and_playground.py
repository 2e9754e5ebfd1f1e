"""Two front-door options in the template: `a2a:cardSigning=true` (a retained KMS signing key
only the door's role may use: docs/signing.md) and `a2a:playground=true` (the page on the door:
docs/playground.md). Off by default: the default stack has neither."""

from __future__ import annotations

import json
from pathlib import Path

from a2akit.settings import ENV
from infra.jsonrpc_api import HANDLER
from tests.support.template import Synth, actions_of, environments, lambda_function, role_of


def test_the_default_stack_signs_nothing_and_serves_no_playground(template: object) -> None:
    from aws_cdk.assertions import Template

    assert isinstance(template, Template)
    assert template.find_resources("AWS::KMS::Key") == {}
    for variables in environments(template).values():
        assert ENV.CARD_SIGNING_KMS_KEY_ID not in variables
        assert ENV.PLAYGROUND not in variables


def test_card_signing_is_a_retained_kms_key_only_the_door_signs_with(
        synth: Synth, empty_bundle: Path, tmp_path: Path) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{"a2a:cardSigning": "true",
                                                      "a2a:playground": "true"})
    ((key_id, key),) = template.find_resources("AWS::KMS::Key").items()
    assert key["Properties"]["KeySpec"] == "ECC_NIST_P256"
    assert key["Properties"]["KeyUsage"] == "SIGN_VERIFY"
    assert key["DeletionPolicy"] == "Retain" and key["UpdateReplacePolicy"] == "Retain"
    _, door = lambda_function(template, HANDLER)
    variables = door["Environment"]["Variables"]
    assert variables[ENV.CARD_SIGNING_KMS_KEY_ID] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert variables[ENV.PLAYGROUND] == "true"
    door_role = role_of(door)
    assert actions_of(template, door_role, "kms:") == {"kms:Sign", "kms:GetPublicKey"}
    # No other role of the stack may use the key (the key policy names only the account).
    for role_id in template.find_resources("AWS::IAM::Role"):
        if role_id != door_role:
            assert not actions_of(template, role_id, "kms:Sign"), role_id
    policy = json.dumps(key["Properties"]["KeyPolicy"])
    assert "kms:Sign" not in policy  # signing is granted to the door's role, not in the key
