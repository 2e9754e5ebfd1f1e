"""The optional WAF web ACL in front of the public door (`-c a2a:waf=true`): a rate-based
rule per client IP. A request it blocks gets 403 from API Gateway and never invokes the
function (docs/public-door.md, "Limits")."""

from __future__ import annotations

from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

__all__ = ["RATE_WINDOW_SECONDS", "RateLimitAcl"]

# The window WAF counts each IP's requests over (its default; 60, 120, 300 or 600).
RATE_WINDOW_SECONDS = 300


def _visibility(name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True)


class RateLimitAcl(Construct):
    """A regional web ACL that allows by default and blocks an IP above `limit` requests in
    `RATE_WINDOW_SECONDS`, associated with the REST API stage `stage_arn`."""

    def __init__(self, scope: Construct, construct_id: str, *, stage_arn: str,
                 limit: int) -> None:
        super().__init__(scope, construct_id)
        self.acl = wafv2.CfnWebACL(
            self,
            "Acl",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=_visibility("a2a-door"),
            rules=[wafv2.CfnWebACL.RuleProperty(
                name="RatePerIp",
                priority=0,
                action=wafv2.CfnWebACL.RuleActionProperty(block={}),
                statement=wafv2.CfnWebACL.StatementProperty(
                    rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                        aggregate_key_type="IP",
                        limit=limit,
                        evaluation_window_sec=RATE_WINDOW_SECONDS,
                    )),
                visibility_config=_visibility("a2a-rate-per-ip"),
            )],
        )
        self.association = wafv2.CfnWebACLAssociation(
            self, "Association", resource_arn=stage_arn, web_acl_arn=self.acl.attr_arn)
