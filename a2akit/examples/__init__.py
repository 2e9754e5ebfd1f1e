"""Demo agents: `A2A_AGENT=a2akit.examples.echo:agent` (the default),
`a2akit.examples.streaming:agent`, `a2akit.examples.input_required:agent`,
`a2akit.examples.cancellable:agent`."""
