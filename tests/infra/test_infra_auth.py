"""Authentication in the template: `a2a:auth` chooses the scheme; both bindings get the same
settings; each reads just its own credentials' store. Asserted by type and properties; every
synth here also runs cdk-nag, which fails on any unacknowledged finding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template
from cfnlint.api import ManualArgs, lint_file  # type: ignore[import-untyped]

from a2akit.settings import ENV
from infra.auth import RESOURCE_SERVER, SCOPE
from infra.config import ConfigError, DeployConfig
from infra.jsonrpc_api import HANDLER
from tests.support.template import CONTAINER, Synth, environments, logical_id, statements

pytestmark = pytest.mark.slow

_IGNORED_LINT_CHECKS = ["W3005", "W3010"]


def _environments(template: Template) -> list[dict[str, Any]]:
    """The environment of the JSON-RPC Lambda and of the gRPC container, as name -> value."""
    return [environment for name, environment in environments(template).items()
            if name in (HANDLER, CONTAINER)]


def _secret_statements(template: Template) -> list[dict[str, Any]]:
    return [statement for statement in statements(template)
            if "secretsmanager" in str(statement["Action"])]


# --- the default: JWTs from the stack's own Cognito user pool ---------------------------


def test_default_is_a_cognito_pool_for_machine_clients(template: Template) -> None:
    template.has_resource_properties(
        "AWS::Cognito::UserPool",
        {"AdminCreateUserConfig": {"AllowAdminCreateUserOnly": True}},
    )
    template.has_resource_properties(
        "AWS::Cognito::UserPoolResourceServer",
        {"Identifier": RESOURCE_SERVER, "Scopes": [Match.object_like({"ScopeName": SCOPE})]},
    )
    template.has_resource_properties(
        "AWS::Cognito::UserPoolClient",
        {
            "AllowedOAuthFlows": ["client_credentials"],
            "AllowedOAuthFlowsUserPoolClient": True,
            "GenerateSecret": True,
            "AllowedOAuthScopes": [Match.any_value()],
        },
    )
    template.resource_count_is("AWS::Cognito::UserPoolDomain", 1)
    template.resource_count_is("AWS::SecretsManager::Secret", 0)
    template.resource_count_is("AWS::ApiGateway::Authorizer", 0)
    assert _secret_statements(template) == []


def test_both_bindings_check_tokens_of_that_pool(template: Template) -> None:
    pool = logical_id(template, "AWS::Cognito::UserPool")
    client = logical_id(template, "AWS::Cognito::UserPoolClient")
    issuer = {"Fn::Join": ["", ["https://cognito-idp.us-east-1.amazonaws.com/", {"Ref": pool}]]}
    environments = _environments(template)
    assert len(environments) == 2
    for environment in environments:
        assert environment[ENV.JWT_ISSUER] == issuer
        assert environment[ENV.JWT_AUDIENCE] == {"Ref": client}
        assert environment[ENV.JWT_REQUIRED_SCOPES] == f"{RESOURCE_SERVER}/{SCOPE}"
        assert ENV.API_KEYS_SECRET not in environment
        assert ENV.BEARER_TOKENS not in environment
    outputs = template.find_outputs("*")
    assert outputs["JwtIssuer"]["Value"] == issuer
    assert outputs["MachineClientId"]["Value"] == {"Ref": client}
    assert "/oauth2/token" in str(outputs["TokenUrl"]["Value"])


# --- API keys in Secrets Manager -------------------------------------------------------


def test_api_keys_live_in_a_secret_both_bindings_read(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    _, template, path = synth(
        empty_bundle, tmp_path, **{"a2a:auth": "apiKey", "a2a:apiKeyHeader": "x-agent-key"}
    )
    template.resource_count_is("AWS::Cognito::UserPool", 0)
    secret = logical_id(template, "AWS::SecretsManager::Secret")
    for environment in _environments(template):
        assert environment[ENV.API_KEYS_SECRET] == {"Ref": secret}
        assert environment[ENV.API_KEY_HEADER] == "x-agent-key"
        assert ENV.JWT_ISSUER not in environment
    statements = _secret_statements(template)
    assert len(statements) == 2  # the Lambda's role and the task role
    for statement in statements:
        assert statement["Resource"] == {"Ref": secret}
        assert sorted(statement["Action"]) == [
            "secretsmanager:DescribeSecret",
            "secretsmanager:GetSecretValue",
        ]
    assert "ApiKeysSecretArn" in template.find_outputs("*")
    matches = lint_file(path, config=ManualArgs(ignore_checks=_IGNORED_LINT_CHECKS))
    assert [str(match) for match in matches] == []


# --- another issuer ------------------------------------------------------------------------


def test_an_external_issuer(synth: Synth, empty_bundle: Path, tmp_path: Path) -> None:
    _, template, _ = synth(
        empty_bundle,
        tmp_path,
        **{
            "a2a:jwtIssuer": "https://login.example.com/",
            "a2a:jwtAudience": "agent-1,agent-2",
            "a2a:jwtTenantClaim": "org",
        },
    )
    template.resource_count_is("AWS::Cognito::UserPool", 0)
    for environment in _environments(template):
        assert environment[ENV.JWT_ISSUER] == "https://login.example.com/"
        assert environment[ENV.JWT_AUDIENCE] == "agent-1,agent-2"
        assert environment[ENV.JWT_TENANT_CLAIM] == "org"
        assert ENV.JWT_REQUIRED_SCOPES not in environment
    # The in-process check decides; API Gateway runs no authorizer of its own.
    template.resource_count_is("AWS::ApiGateway::Authorizer", 0)


def test_the_http_api_authorizer_is_gone_and_says_so() -> None:
    with pytest.raises(ConfigError, match="a2a:httpApiJwtAuthorizer is gone"):
        DeployConfig.from_context({"a2a:httpApiJwtAuthorizer": "true"}.get)


# --- configuration -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("context", "key"),
    [
        ({"a2a:auth": "oauth"}, "a2a:auth"),
        ({"a2a:apiKeyHeader": "x-key"}, "a2a:apiKeyHeader"),
        ({"a2a:auth": "apiKey", "a2a:jwtIssuer": "https://i.example"}, "a2a:jwtIssuer"),
        ({"a2a:auth": "none", "a2a:httpApiJwtAuthorizer": True}, "a2a:httpApiJwtAuthorizer"),
        ({"a2a:jwtIssuer": "http://i.example", "a2a:jwtAudience": "a"}, "a2a:jwtIssuer"),
        ({"a2a:jwtIssuer": "https://i.example"}, "a2a:jwtAudience"),
        (
            {"a2a:jwtIssuer": "https://i.example", "a2a:jwtAudience": "a",
             "a2a:cognitoDomainPrefix": "mine"},
            "a2a:cognitoDomainPrefix",
        ),
    ],
)
def test_auth_context_mistakes_name_their_key(context: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        DeployConfig.from_context({"a2a:grpc": False, **context}.get)
