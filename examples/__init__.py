"""Demo agents: `A2A_AGENT=examples.echo:agent` (the default), `examples.streaming:agent`,
`examples.input_required:agent`, `examples.cancellable:agent`."""
