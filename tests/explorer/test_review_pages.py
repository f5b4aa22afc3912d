"""Four eyes on the pages (issue 34, section 3): the list's review filter and tag, the printed report's review line,
and the session page's review panel given to reviewers only (its behaviour: tests/e2e/test_facts_page.py)."""

import pytest
from django.urls import reverse
from django.utils import timezone

from reasoning.models import ReasoningSession, Role
from tests.reasoning.test_review import answered, four_eyes, member  # noqa: F401  (four_eyes: a fixture)

pytestmark = pytest.mark.django_db



def decided(party, state, comment="", reason=""):
    session = answered(party, state=state)
    by = "user:rita" if state in ("approved", "changes_requested") else ""
    ReasoningSession.objects.filter(pk=session.pk).update(
        review_by=by, review_at=timezone.now(), review_comment=comment, review_reason=reason
    )
    session.refresh_from_db()
    return session


def rows(html):
    return html.count('<tr data-session-id="')


def test_the_list_filters_by_review_and_tags_each_row(client, four_eyes):
    waiting = decided(four_eyes, "awaiting", reason="approval by user:rita withdrawn: a fact changed")
    approved = decided(four_eyes, "approved")
    unasked = answered(four_eyes, state="")
    client.force_login(four_eyes.rita)
    page = client.get("/?review=awaiting").content.decode()
    assert rows(page) == 1 and str(waiting.id) in page and 'data-testid="row-review"' in page
    assert "Awaiting review</span>" in page and "withdrawn: a fact changed" in page  # the tag's title says why
    assert '<option value="awaiting" selected>' in page
    approved_page = client.get("/?review=approved").content.decode()
    assert rows(approved_page) == 1 and str(approved.id) in approved_page and "Approved by user:rita" in approved_page
    none_page = client.get("/?review=none").content.decode()
    assert rows(none_page) == 1 and str(unasked.id) in none_page and 'data-testid="row-review"' not in none_page
    assert rows(client.get("/?review=bogus").content.decode()) == 3  # an unknown value filters nothing


@pytest.mark.parametrize(
    "state, comment, reason, expected",
    [
        ("approved", "Clear and sourced.", "", ["Approved by user:rita", "“Clear and sourced.”"]),
        ("changes_requested", "Name the tranches.", "", ["Changes requested by user:rita", "“Name the tranches.”"]),
        ("awaiting", "", "approval by user:rita withdrawn: user:ana edited step 1 of the answer's line",
         ["Awaiting review since", "(approval by user:rita withdrawn: user:ana edited step 1", "not yet signed off"]),
    ],
)
def test_the_printed_report_says_who_signed_off_when_and_why(client, four_eyes, state, comment, reason, expected):
    session = decided(four_eyes, state, comment, reason)
    client.force_login(four_eyes.user)
    html = client.get(reverse("explorer:session_report", kwargs={"session_id": session.id})).content.decode()
    assert f'data-state="{state}"' in html
    for words in expected:
        assert words.replace("'", "&#x27;") in html


def test_the_report_of_a_tenant_without_four_eyes_has_no_review_line(client, alice):
    session = answered(alice, state="")
    client.force_login(alice.user)
    html = client.get(reverse("explorer:session_report", kwargs={"session_id": session.id})).content.decode()
    assert 'data-testid="report-review-state"' not in html


def test_the_report_says_an_unreviewed_answer_is_not_signed_off_where_review_is_required(client, four_eyes):
    session = answered(four_eyes, state="")
    client.force_login(four_eyes.user)
    html = client.get(reverse("explorer:session_report", kwargs={"session_id": session.id})).content.decode()
    assert "Not reviewed: this tenant requires a second person" in html


@pytest.mark.parametrize("role, can_review", [(Role.REVIEWER, True), (Role.ADMIN, True), (Role.ADVISOR, False),
                                              (Role.VIEWER, False)])
def test_the_session_page_gives_the_review_buttons_to_reviewers_and_admins_only(client, four_eyes, role, can_review):
    session = answered(four_eyes)
    user = member(four_eyes, f"someone-{role}", role)
    client.force_login(user)
    html = client.get(reverse("explorer:session_detail", kwargs={"session_id": session.id})).content.decode()
    assert f'data-can-review="{str(can_review).lower()}"' in html and 'data-testid="review-panel"' in html
    assert f'data-person="user:someone-{role}"' in html and 'data-review-required="true"' in html
    assert '"review": {"state": "awaiting"' in html  # the embedded session carries it for the panel
    # Only an advisor or an admin steers: a reviewer signs off and watches.
    assert ('data-can-act="true"' in html) == (role in (Role.ADVISOR, Role.ADMIN))
