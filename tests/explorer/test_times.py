"""Times are labelled with their zone (issue 16, item 9): the admin and the server-rendered pages in the tenant's
zone (Tenant.time_zone), the explorer's scripts in the browser's (tests/e2e/test_desk.py)."""

from datetime import datetime
from datetime import timezone as dt_timezone

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from reasoning.models import Membership, ReasoningSession, Role, Tenant

pytestmark = pytest.mark.django_db

NOON_UTC = datetime(2026, 1, 15, 12, 0, tzinfo=dt_timezone.utc)


@pytest.fixture
def zurich(rubrics):
    tenant = Tenant.objects.create(slug="zurich", name="Zurich", time_zone="Europe/Zurich")
    user = get_user_model().objects.create_user("zadmin", password="pw", is_staff=True)
    Membership.objects.create(user=user, tenant=tenant, role=Role.ADMIN)
    ReasoningSession.objects.create(
        tenant=tenant,
        problem_text="Plan a pillar 3a top-up.",
        model_primary="offline/sim",
        status="solved",
        started_at=NOON_UTC,
        resumed_at=NOON_UTC,
        finished_at=NOON_UTC,
    )
    return user


def test_the_admin_shows_times_in_the_tenants_zone_with_its_name(client, zurich):
    client.force_login(zurich)
    page = client.get("/admin/reasoning/reasoningsession/").content.decode()
    assert "2026-01-15 13:00:00 CET" in page  # noon UTC is 13:00 in Zurich in January
    assert "12:00:00" not in page


def test_the_sessions_list_labels_its_times_before_any_script_runs(client, zurich):
    client.force_login(zurich)
    page = client.get("/").content.decode()
    assert "2026-01-15 13:00 CET" in page and "data-local" in page


def test_a_member_of_a_tenant_in_utc_reads_utc_labelled(client, alice):
    ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="x", model_primary="offline/sim", started_at=NOON_UTC
    )
    client.force_login(alice.user)
    assert "2026-01-15 12:00 UTC" in client.get("/").content.decode()


def test_a_time_zone_must_exist():
    with pytest.raises(ValidationError):
        Tenant(slug="nowhere", time_zone="Mars/Olympus").full_clean()


def test_a_tenant_admin_sets_its_tenants_time_zone(client, zurich):
    tenant = zurich.membership.tenant
    client.force_login(zurich)
    response = client.post(
        f"/admin/reasoning/tenant/{tenant.pk}/change/",
        {"name": "Zurich office", "time_zone": "America/New_York", "slug": "taken-over"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    tenant.refresh_from_db()
    assert (tenant.time_zone, tenant.name, tenant.slug) == ("America/New_York", "Zurich office", "zurich")
