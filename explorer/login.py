"""Logins are throttled: a password guessed at 4 a second gets nowhere (REASONING_LOGIN_RATE per username and
REASONING_LOGIN_IP_RATE per client address, counted in the cache like every other limit; a 429 with Retry-After)."""

import math
from functools import wraps

from django.shortcuts import render

from reasoning import throttles


def throttled_login(view):
    """A login view (the explorer's or the admin's) whose POSTs spend the username's and the address's allowance."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method == "POST":
            username = (request.POST.get("username") or "").strip().lower()[:150]
            address = request.META.get("REMOTE_ADDR") or "unknown"
            waits = [
                throttles.take("LOGIN_RATE", f"login:{username}"),
                throttles.take("LOGIN_IP_RATE", f"login-ip:{address}"),
            ]
            wait = max((w for w in waits if w is not None), default=None)
            if wait is not None:
                seconds = math.ceil(wait)
                response = render(request, "registration/too_many_logins.html", {"wait": seconds}, status=429)
                response["Retry-After"] = str(seconds)
                return response
        return view(request, *args, **kwargs)

    return wrapper
