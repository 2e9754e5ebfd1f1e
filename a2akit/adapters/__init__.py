"""Adapters that serve an agent built with a framework: one module per framework, each behind
its own extra, imported only by whoever names it (docs/frameworks.md).

    a2akit.adapters.langgraph       LangGraphAgent(graph)   pip install 'a2a-aws-kit[langgraph]'
    a2akit.adapters.strands         StrandsAgent(agent)     pip install 'a2a-aws-kit[strands]'
    a2akit.adapters.openai_agents   OpenAIAgent(agent)      pip install 'a2a-aws-kit[openai-agents]'

Nothing is imported here: the kit's front doors never load a framework, and a missing extra
is reported by the adapter module that needs it, with the install command.
"""

__all__: list[str] = []
