"""The A2A AWS kit's core. What an agent author imports::

    from a2akit import Agent, RequestContext, TaskHandle
"""

from a2akit.agent import Agent, RequestContext, TaskHandle

__all__ = ["Agent", "RequestContext", "TaskHandle"]
