"""Where callers' credentials come from: a Cognito user pool issuing JWTs to machine clients
(client credentials), or a Secrets Manager secret holding API-key hashes. The kit checks them
in process (a2akit/auth); these constructs only provide and expose them."""

from __future__ import annotations

import re

from aws_cdk import Aws, Duration, Fn, RemovalPolicy, SecretValue, Stack
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

__all__ = ["RESOURCE_SERVER", "SCOPE", "ApiKeySecret", "CognitoIssuer"]

# The scope machine clients are granted and the kit requires: "a2a/invoke".
RESOURCE_SERVER = "a2a"
SCOPE = "invoke"


class CognitoIssuer(Construct):
    """A user pool for machine-to-machine callers: a resource server with the `a2a/invoke`
    scope, a Cognito domain for the token endpoint and one app client allowed the client
    credentials flow. Exposes `user_pool`, `client`, `issuer`, `token_url`, `audience` and
    `scope`."""

    def __init__(self, scope: Construct, construct_id: str, *, domain_prefix: str | None,
                 stack_name: str) -> None:
        super().__init__(scope, construct_id)
        self.user_pool = cognito.UserPool(
            self,
            "Pool",
            self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(username=True),
            password_policy=cognito.PasswordPolicy(
                min_length=14, require_digits=True, require_lowercase=True,
                require_uppercase=True, require_symbols=True,
            ),
            account_recovery=cognito.AccountRecovery.NONE,
            mfa=cognito.Mfa.OFF,
            # Replacing the pool would change the issuer and every client's credentials.
            removal_policy=RemovalPolicy.RETAIN,
        )
        invoke = cognito.ResourceServerScope(scope_name=SCOPE,
                                             scope_description="Call the A2A agent")
        server = self.user_pool.add_resource_server(
            "ResourceServer", identifier=RESOURCE_SERVER, scopes=[invoke]
        )
        self.domain = self.user_pool.add_domain(
            "Domain",
            cognito_domain=cognito.CognitoDomainOptions(
                domain_prefix=domain_prefix or _default_prefix(stack_name)
            ),
        )
        self.client = self.user_pool.add_client(
            "MachineClient",
            generate_secret=True,
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(client_credentials=True),
                scopes=[cognito.OAuthScope.resource_server(server, invoke)],
            ),
            auth_flows=cognito.AuthFlow(),
            access_token_validity=Duration.hours(1),
            prevent_user_existence_errors=True,
        )
        self.scope = f"{RESOURCE_SERVER}/{SCOPE}"

    @property
    def issuer(self) -> str:
        """`https://cognito-idp.REGION.amazonaws.com/POOL_ID`, the tokens' `iss`. Spelled out
        (as CDK's own Cognito authorizer does): the pool's ProviderURL has no scheme."""
        region = Stack.of(self).region
        return f"https://cognito-idp.{region}.amazonaws.com/{self.user_pool.user_pool_id}"

    @property
    def token_url(self) -> str:
        return self.domain.base_url() + "/oauth2/token"

    @property
    def audience(self) -> str:
        """Cognito access tokens name the app client in `client_id` (they carry no `aud`)."""
        return self.client.user_pool_client_id


def _default_prefix(stack_name: str) -> str:
    # Cognito domain prefixes are global per region: the account makes this one unique.
    # Lower-case letters, digits and hyphens; "aws", "amazon" and "cognito" are reserved.
    base = re.sub(r"[^a-z0-9-]+", "-", stack_name.lower())
    base = re.sub(r"aws|amazon|cognito", "x", base).strip("-") or "a2a"
    return Fn.join("-", [base, Aws.ACCOUNT_ID])


class ApiKeySecret(Construct):
    """The secret holding the API-key records: a JSON list of `{"principal", "sha256",
    "tenant"?}`, never keys (`python -m a2akit.auth.api_keys NAME` makes a key and its record).
    Deployed empty; the operator adds records (`aws secretsmanager put-secret-value`).
    Exposes `secret`."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.secret = secretsmanager.Secret(
            self,
            "Secret",
            description="A2A API keys: SHA-256 hashes with their principals (no keys)",
            # An empty list, not a secret: records are added after deployment.
            secret_string_value=SecretValue.unsafe_plain_text("[]"),
        )
