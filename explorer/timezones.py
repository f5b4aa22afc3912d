"""Times in the member's tenant's zone (issue 16, item 9): the admin and the server-rendered pages show them there,
each labelled with its zone; the explorer's scripts then show them in the browser's own zone."""

import zoneinfo

from django.utils import timezone

from reasoning import selectors


class TenantTimeZoneMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        zone = tenant_zone(getattr(request, "user", None))
        if zone is not None:
            timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()


def tenant_zone(user):
    """The zone of the user's tenant, or None (UTC) for anonymous users and users of no tenant."""
    membership = selectors.membership_for(user) if user is not None and user.is_authenticated else None
    if membership is None:
        return None
    try:
        return zoneinfo.ZoneInfo(membership.tenant.time_zone or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None
