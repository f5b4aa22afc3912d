"""Logins are throttled: a password guessed at 4 a second gets nowhere, and a stranger's guesses cost the stranger.

A failed login is counted per client address and username together (REASONING_LOGIN_RATE) and per address
(REASONING_LOGIN_IP_RATE), in the shared cache like every other limit; a 429 with Retry-After beyond either. A pair
that runs out again and again waits longer each time (LOGIN_LOCK_S doubled per lock-out, up to a day), so guessing
from one address gets slower and slower, while the user, logging in from their own address, is not locked out by it.
The name is counted as Django resolves it (NFKC, as the login form normalises it, and case-folded), so `ｂｏｂ` or
`𝐛𝐨𝐛` spend bob's allowance. A login that succeeds costs nothing and clears its pair's lock-outs.
"""

import math
import unicodedata
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.shortcuts import render

from reasoning import throttles
from reasoning.outages import DEPENDENCY_ERRORS, RETRY_AFTER_S

MAX_LOCK_S = 86400
STRIKES_TTL_S = 86400  # a pair's lock-outs are remembered this long after the last one


def resolved_name(raw):
    """The username as Django's login form resolves it (stripped, NFKC), case-folded: every spelling of one name."""
    name = unicodedata.normalize("NFKC", (raw or "").strip())
    return unicodedata.normalize("NFKC", name.casefold())[:150]


def throttled_login(view):
    """A login view (the explorer's or the admin's) whose failed POSTs spend the pair's and the address's allowance."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method != "POST":
            return view(request, *args, **kwargs)
        address = request.META.get("REMOTE_ADDR") or "unknown"
        pair = f"login:{address}:{resolved_name(request.POST.get('username'))}"
        try:
            wait = _spend(pair, address)
        except DEPENDENCY_ERRORS:  # the cache is down: no guess is checked unmetered
            response = HttpResponse("Logins are unavailable for a moment; retry in a few seconds.", status=503)
            response["Retry-After"] = str(RETRY_AFTER_S)
            return response
        if wait is not None:
            return _refused(request, wait)
        response = view(request, *args, **kwargs)
        if request.user.is_authenticated and response.status_code in (302, 303):
            try:  # a login that worked costs nothing
                throttles.give_back("LOGIN_RATE", pair)
                throttles.give_back("LOGIN_IP_RATE", f"login-ip:{address}")
                cache.delete_many([_strikes_key(pair), _lock_key(pair)])
            except DEPENDENCY_ERRORS:
                pass
        return response

    return wrapper


def _spend(pair, address):
    """None if this attempt may be checked, else seconds to wait: the pair's lock-out, its allowance, the address's."""
    locked_until = cache.get(_lock_key(pair))
    now = throttles.clock()
    if locked_until and locked_until > now:
        return locked_until - now
    wait = throttles.take("LOGIN_RATE", pair)
    if wait is not None:
        return _lock_out(pair, wait)
    ip_wait = throttles.take("LOGIN_IP_RATE", f"login-ip:{address}")
    if ip_wait is not None:
        throttles.give_back("LOGIN_RATE", pair)  # not checked: it costs the pair nothing
    return ip_wait


def _lock_out(pair, wait):
    """The pair ran out of its allowance: it waits for it, doubled for each earlier lock-out within a day."""
    key = _strikes_key(pair)
    cache.add(key, 0, timeout=STRIKES_TTL_S)
    try:
        strikes = cache.incr(key)
    except ValueError:
        cache.set(key, strikes := 1, timeout=STRIKES_TTL_S)
    period = settings.REASONING["LOGIN_RATE"][1]
    lock = min(MAX_LOCK_S, max(wait, period * 2 ** (strikes - 1) if strikes > 1 else wait))
    cache.set(_lock_key(pair), throttles.clock() + lock, timeout=math.ceil(lock) + 1)
    return lock


def _strikes_key(pair):
    return f"reasoning:login-strikes:{pair}"


def _lock_key(pair):
    return f"reasoning:login-lock:{pair}"


def _refused(request, wait):
    seconds = max(1, math.ceil(wait))
    response = render(request, "registration/too_many_logins.html", {"wait": seconds}, status=429)
    response["Retry-After"] = str(seconds)
    return response
