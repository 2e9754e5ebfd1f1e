"""The A2A AWS kit's core. What an agent author imports::

    from a2akit import Agent, RequestContext, TaskHandle
    from a2akit import parameter, secret  # what the agent reads at run time (agent_secrets)
"""

from a2akit.agent import Agent, AgentFailure, RequestContext, TaskHandle
from a2akit.agent_secrets import parameter, secret

__all__ = ["Agent", "AgentFailure", "RequestContext", "TaskHandle", "parameter", "secret"]
