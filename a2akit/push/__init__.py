"""Push notifications (spec 3.5.1, 4.3.3, 13.2; bindings.md 6).

    guard       the SSRF guard: which webhook URLs and header values may be used (stdlib
                only, imported by the front door when a config is created)
    sender      one webhook POST with retries, through the guard at connect time (needs
                httpx; only the dispatchers import it)
    dispatcher  one stored event to every config of its task; failures to the dead-letter
                queue, counted by the metric in `metric`
    inline      the in-process feed: the store hands each event it wrote to the dispatcher
    stream      the AWS feed: DynamoDB Streams records (handlers.push)
"""
