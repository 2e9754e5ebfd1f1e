"""What the user's agent may do and read in AWS, granted to the roles that run it and no
other (the stack decides which: infra/stack.py).

- its IAM policy document (a2a:agentPolicy, or the project's iam-policy.json): one customer
  managed policy;
- AWS or customer managed policies by ARN (a2a:agentManagedPolicies);
- read access to the secrets and parameters it reads by name (a2a:agentSecrets,
  a2a:agentParameters; a2akit/agent_secrets.py): secretsmanager:GetSecretValue on each secret
  and ssm:GetParameter on each parameter, in a second managed policy. No kms:Decrypt: values
  encrypted with the account's default keys (aws/secretsmanager, aws/ssm) are decrypted by the
  service for any principal allowed the read; a customer managed key needs kms:Decrypt in the
  agent's own policy;
- `environment`: A2A_AGENT_SECRETS / A2A_AGENT_PARAMETERS, names and where to read them
  (ARNs, names, paths), never a value.

cdk-nag stays strict on the kit's statements; on the user's it acknowledges, with the reason,
only what the user chose: wildcards in their policy, a secret named without its ARN's random
suffix, AWS managed policies they listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import Acknowledgment, Aws, Validations
from aws_cdk import aws_iam as iam
from constructs import Construct

from a2akit.settings import ENV

from .config import CONTEXT, AgentPolicy

__all__ = ["AgentAccess", "parameter_arn", "secret_arn"]

# What cdk-nag writes for the partition, region and account in a finding's id.
_NAG_TOKENS = {Aws.PARTITION: "<AWS::Partition>", Aws.REGION: "<AWS::Region>",
               Aws.ACCOUNT_ID: "<AWS::AccountId>"}


def secret_arn(where: str) -> str:
    """The secret's ARN: as given, or from its name (its ARN ends in `-` and six random
    characters, which only a wildcard matches)."""
    if where.startswith("arn:"):
        return where
    return f"arn:{Aws.PARTITION}:secretsmanager:{Aws.REGION}:{Aws.ACCOUNT_ID}:secret:{where}-??????"


def parameter_arn(where: str) -> str:
    """The parameter's ARN: as given, or from its name or path (`/a/b` -> `parameter/a/b`)."""
    if where.startswith("arn:"):
        return where
    return (f"arn:{Aws.PARTITION}:ssm:{Aws.REGION}:{Aws.ACCOUNT_ID}:parameter/"
            f"{where.removeprefix('/')}")


def _wildcards(document: Mapping[str, Any]) -> list[str]:
    """cdk-nag's findings (AwsSolutions-IAM5) on a policy document: each action and each
    resource of an Allow statement that holds a wildcard."""
    found: dict[str, None] = {}
    for statement in document["Statement"]:
        if statement.get("Effect") != "Allow":
            continue
        for kind, key in (("Action", "Action"), ("Resource", "Resource")):
            values = statement.get(key, [])
            for value in [values] if isinstance(values, str) else values:
                if isinstance(value, str) and "*" in value:
                    found[f"{kind}::{value}"] = None
    return list(found)


def _nag_id(arn: str) -> str:
    for token, name in _NAG_TOKENS.items():
        arn = arn.replace(token, name)
    return arn


class AgentAccess(Construct):
    """Exposes `policy` (the user's document, or None), `reads` (the secrets' and parameters'
    read policy, or None), `managed_policies` and `environment`; `grant(role)` gives a role
    all of them."""

    def __init__(self, scope: Construct, construct_id: str, *, policy: AgentPolicy | None,
                 managed_policy_arns: Sequence[str], secrets: Mapping[str, str],
                 parameters: Mapping[str, str]) -> None:
        super().__init__(scope, construct_id)
        self.policy: iam.ManagedPolicy | None = None
        if policy is not None:
            self.policy = iam.ManagedPolicy(
                self, "Policy", description=f"The agent's own permissions ({policy.path.name})",
                document=iam.PolicyDocument.from_json(dict(policy.document)))
            wildcards = _wildcards(policy.document)
            if wildcards:
                Validations.of(self.policy).acknowledge(*(Acknowledgment(
                    id=f"AwsSolutions-IAM5[{finding}]",
                    reason=f"The agent's own statement, as its owner wrote it in {policy.path}"
                    f" ({CONTEXT.AGENT_POLICY}); it reaches only the roles that run the agent.")
                    for finding in wildcards))
        self.managed_policies = [
            iam.ManagedPolicy.from_managed_policy_arn(self, f"Managed{index}", arn)
            for index, arn in enumerate(managed_policy_arns)]
        self._aws_managed = [arn for arn in managed_policy_arns if ":iam::aws:policy/" in arn]
        statements = []
        if secrets:
            statements.append(iam.PolicyStatement(
                actions=["secretsmanager:GetSecretValue"],
                resources=[secret_arn(where) for where in secrets.values()]))
        if parameters:
            statements.append(iam.PolicyStatement(
                actions=["ssm:GetParameter"],
                resources=[parameter_arn(where) for where in parameters.values()]))
        self.reads: iam.ManagedPolicy | None = None
        if statements:
            self.reads = iam.ManagedPolicy(
                self, "Reads", statements=statements,
                description="The agent's secrets and parameters, read by name")
            by_name = [secret_arn(where) for where in secrets.values()
                       if not where.startswith("arn:")]
            if by_name:
                Validations.of(self.reads).acknowledge(*(Acknowledgment(
                    id=f"AwsSolutions-IAM5[Resource::{_nag_id(arn)}]",
                    reason=f"A secret named in {CONTEXT.AGENT_SECRETS} without its ARN: the"
                    " wildcard stands for the six random characters Secrets Manager appends"
                    " to the name, nothing more.") for arn in by_name))
        self.environment = {
            variable: ",".join(f"{name}={where}" for name, where in values.items())
            for variable, values in ((ENV.AGENT_SECRETS, secrets),
                                     (ENV.AGENT_PARAMETERS, parameters)) if values}

    def grant(self, role: iam.IRole | None) -> None:
        """Everything the agent may do and read, on `role` (one that runs the agent)."""
        assert role is not None
        for policy in (self.policy, self.reads, *self.managed_policies):
            if policy is not None:
                role.add_managed_policy(policy)
        if self._aws_managed:
            Validations.of(role).acknowledge(*(Acknowledgment(
                id=f"AwsSolutions-IAM4[Policy::{arn}]",
                reason="An AWS managed policy the agent's owner chose"
                f" ({CONTEXT.AGENT_MANAGED_POLICIES}), on the roles that run the agent only.")
                for arn in self._aws_managed))
