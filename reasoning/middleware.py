"""The JSON API's door for bodies: JSON only, and not too large, answered in JSON like every other API error."""

from django.conf import settings
from django.http import JsonResponse

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
