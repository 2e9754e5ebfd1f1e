"""A2A 0.3 callers on the 1.0 endpoints: conversions, the 0.3 operations and their codecs.

Nothing here is imported by the 1.0 path; the bindings load it on a 0.3 request."""
