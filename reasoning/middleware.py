"""Doors for what a request carries: no NUL character in its URL (PostgreSQL text cannot hold one), and for the JSON
API, bodies that are JSON and not too large, answered in JSON like every other API error."""

from urllib.parse import unquote

from django.conf import settings
from django.http import HttpResponseBadRequest, JsonResponse

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
