"""HTTP through Django, websockets through Channels; the in-process runner binds to this server's loop."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

import reasoning.llm.gateway  # noqa: E402,F401  litellm takes seconds to import: pay it at startup, not in a session
from explorer.middleware import TokenOrOriginValidator  # noqa: E402
from explorer.routing import websocket_urlpatterns  # noqa: E402
from reasoning.middleware import AsgiBodyLimit  # noqa: E402
from reasoning.recovery import install_server_hooks  # noqa: E402
from reasoning.runner import bind_loop  # noqa: E402

install_server_hooks()  # under Daphne: resume stranded sessions at start, checkpoint running ones on SIGTERM

router = ProtocolTypeRouter(
    {
        "http": AsgiBodyLimit(django_asgi_app),
        "websocket": TokenOrOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)


async def application(scope, receive, send):
    bind_loop()
    return await router(scope, receive, send)
