"""The agent card's signing key (`a2a:cardSigning=true`, docs/signing.md): an AWS KMS asymmetric
key (ECC_NIST_P256, SIGN_VERIFY) that the front door signs the public and the extended card
with, through `kms:Sign`. Retained when the stack is deleted: cards signed with it stay
verifiable, and a key scheduled for deletion could not be brought back by a redeploy. KMS does
not rotate asymmetric keys (docs/signing.md says how to roll one)."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

__all__ = ["CardSigningKey"]


class CardSigningKey(Construct):
    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(self, "Key", key_spec=kms.KeySpec.ECC_NIST_P256,
                           key_usage=kms.KeyUsage.SIGN_VERIFY,
                           description="Signs the A2A agent card (docs/signing.md)",
                           removal_policy=RemovalPolicy.RETAIN)

    def grant_sign(self, role: iam.IRole | None) -> None:
        """Sign, and read the public key (served as the JWKS): nothing else, this role only."""
        assert role is not None
        self.key.grant(role, "kms:Sign", "kms:GetPublicKey")
