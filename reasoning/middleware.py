"""Doors for what a request carries: no NUL character in its URL (PostgreSQL text cannot hold one), and for the JSON
API, bodies that are JSON and not too large, answered in JSON like every other API error."""

import json
import logging
from http import HTTPStatus
from urllib.parse import unquote

from django.conf import settings
from django.http import HttpResponseBadRequest, JsonResponse

log = logging.getLogger(__name__)

WRITES = {"POST", "PUT", "PATCH", "DELETE"}


class ApiBodyGuard:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/") and request.method in WRITES:
            refusal = self.refuse(request)
            if refusal is not None:
                return refusal
        return self.get_response(request)

    def refuse(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse({"detail": "Content-Length is not a number."}, status=400)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if length > limit:
            return JsonResponse({"detail": f"The body is larger than the {limit} bytes allowed."}, status=413)
        if length and request.content_type != "application/json":
            return JsonResponse({"detail": "Send the body as application/json."}, status=415)
        return None


class NulGuard:
    """A NUL in a page's path or query string (`/?q=%00`, an admin filter) is a 400 before any view runs: the page's
    filter would hand it to PostgreSQL, which refuses it with an error (a 500), where SQLite merely finds nothing.
    The API validates its own parameters and answers a 422 naming the field."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        query = request.META.get("QUERY_STRING", "")
        if not request.path.startswith("/api/") and ("\x00" in request.path or "\x00" in unquote(query)):
            detail = "The address must not contain NUL characters (%00)."
            return HttpResponseBadRequest(detail, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class SecurityHeaders:
    """A Content-Security-Policy with no inline script on every response, and over HTTPS, Secure cookies (HSTS is
    Django's SecurityMiddleware, SECURE_HSTS_SECONDS, sent on HTTPS responses only).

    Scripts are the app's own files (ES modules); data for them travels as JSON (`json_script`), which is not run.
    Style attributes stay allowed: the pages set bar widths inline, and a style cannot run code.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy(request)
        if request.is_secure():
            for morsel in response.cookies.values():
                morsel["secure"] = True
        return response


def policy(request):
    host = request.get_host()
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            f"connect-src 'self' ws://{host} wss://{host}",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


class ApiErrorsAsJson:
    """Every API error is JSON `{"detail": ...}`: Django's own 404, 405 or 400 pages (a path no endpoint serves, a body
    Django refused) and an unexpected exception (logged with its traceback, answered in one line) alike."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            request.path.startswith("/api/")
            and response.status_code >= 400
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            detail = f"{response.reason_phrase or HTTPStatus.BAD_REQUEST.phrase}."
            json_response = JsonResponse({"detail": detail}, status=response.status_code)
            for header in ("Allow", "Retry-After"):
                if header in response:
                    json_response[header] = response[header]
            return json_response
        return response

    def process_exception(self, request, exception):
        if not request.path.startswith("/api/"):
            return None
        log.error("API error on %s %s", request.method, request.path, exc_info=exception)
        return JsonResponse({"detail": "The server failed to answer this request; it has been logged."}, status=500)


class AsgiBodyLimit:
    """An ASGI door in front of Django: a request body over DATA_UPLOAD_MAX_MEMORY_SIZE is refused with a 413 before
    Django reads it, whether it says its length or comes chunked with none (Django would otherwise read a chunked body
    of any size into a temporary file first). The API's answer is JSON."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.application(scope, receive, send)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return await self.refuse(scope, send, limit)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: Django sees the same
                chunks = None
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                return await self.refuse(scope, send, limit)
            if not message.get("more_body", False):
                break
        if chunks is None:
            return await self.application(scope, receive, send)
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        return await self.application(scope, replay, send)

    async def refuse(self, scope, send, limit):
        if scope.get("path", "").startswith("/api/"):
            body = json.dumps({"detail": f"The body is larger than the {limit} bytes allowed."}).encode()
            kind = b"application/json"
        else:
            body, kind = f"The request body is larger than the {limit} bytes allowed.".encode(), b"text/plain"
        headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})
