"""Push notifications: the SSRF guard and the webhook sender against a real receiver."""
