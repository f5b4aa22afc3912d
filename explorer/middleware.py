"""Who may open the live socket: browsers from our own origin, and integrations on their API key."""

from channels.security.websocket import AllowedHostsOriginValidator


class TokenOrOriginValidator:
    """A browser's socket (it always sends Origin and its cookies) must come from an allowed host.

    A client with no Origin header is not a browser page: it is let through without cookies, so only
    its `?token=` key can authenticate it (the consumer refuses it without one).
    """

    def __init__(self, application):
        self.application = application
        self.browser = AllowedHostsOriginValidator(application)

    async def __call__(self, scope, receive, send):
        headers = scope.get("headers", [])
        if any(name == b"origin" for name, _ in headers):
            return await self.browser(scope, receive, send)
        scope = {**scope, "headers": [(name, value) for name, value in headers if name != b"cookie"]}
        return await self.application(scope, receive, send)
