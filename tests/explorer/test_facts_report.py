"""The printable report lists the client's fact sheet and every fact-check finding: the answer's, and the failed
checks of the steps (the answer's path first), all escaped as text."""

import html as markup
import re

import pytest
from django.urls import reverse

from reasoning.models import CaseFact, ReasoningNode, ReasoningSession

pytestmark = pytest.mark.django_db

PROBLEM = (
    "A Californian, 58, holds 70% of her $3.2M portfolio in her employer's stock, cost basis $400k, salary $450k; "
    "she is considering an exchange fund, a charitable remainder trust, a donor-advised fund and a collar."
)


@pytest.fixture
def client_of(client):
    def login(party):
        client.force_login(party.user)
        return client

    return login


def report_url(session):
    return reverse("explorer:session_report", kwargs={"session_id": session.id})


def fact(session, position, label, kind, value, unit="", text="", source="extracted", base=""):
    number = isinstance(value, int | float)
    return CaseFact.objects.create(
        tenant=session.tenant,
        session=session,
        position=position,
        label=label,
        kind=kind,
        number=float(value) if number else None,
        name="" if number else value,
        unit=unit,
        base=base,
        text=text,
        start=PROBLEM.find(text) if text else -1,
        end=PROBLEM.find(text) + len(text) if text else -1,
        source=source,
    )


def failed(kind, text, detail, start=-1):
    return {"kind": kind, "ok": False, "text": text, "detail": detail, "start": start, "end": start + len(text)}


def passed(kind, text, detail):
    return {"kind": kind, "ok": True, "text": text, "detail": detail, "start": 0, "end": len(text)}


@pytest.fixture
def checked_session(alice):
    answer = "Move USD 2.24M through an exchange fund; the <b>$3.2</b> figure is her portfolio."
    session = ReasoningSession.objects.create(
        tenant=alice.tenant,
        problem_text=PROBLEM,
        mode="tot",
        model_primary="offline/sim",
        status="solved",
        termination_reason="solved",
        final_answer=answer,
        answer_chosen_by="user:alice",
        answer_checks=[
            passed("figure", "USD 2.24M", "USD 2.24M is 70% of the portfolio (USD 3.2M)"),
            failed("figure", "$3.2", "$3.2 is not a figure of the client's: USD 3.2M with its scale dropped?", 56),
        ],
    )
    fact(session, 0, "portfolio", "amount", 3_200_000, "USD", "$3.2M portfolio")
    fact(session, 1, "employer stock share", "percent", 70, "%", "70% of her $3.2M portfolio", base="portfolio")
    fact(session, 2, "residence", "place", "US-CA", "ISO 3166", "A Californian")
    fact(session, 3, "salary", "amount", 475_000, "USD", source="advisor")
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=0, thought=PROBLEM)
    step = ReasoningNode.objects.create(
        tenant=alice.tenant,
        session=session,
        parent=root,
        depth=1,
        thought="Her salary of USD 400k puts her in the top bracket.",
        eval_score=0.3,
        checks=[failed("label", "USD 400k", "USD 400k is the cost basis, not the salary", 17)],
    )
    ReasoningNode.objects.create(
        tenant=alice.tenant,
        session=session,
        parent=root,
        depth=1,
        thought="Apply the <i>UK</i> capital gains allowance.",
        eval_score=0.3,
        checks=[failed("jurisdiction", "UK", "a UK rule; the client's places are US-CA")],
    )
    session.root_node, session.final_node = root, step
    session.save()
    return session


def text_of(html):
    return markup.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def test_the_report_lists_the_clients_facts(client_of, alice, checked_session):
    html = client_of(alice).get(report_url(checked_session)).content.decode()
    assert "Client's facts" in text_of(html)
    table = html[html.index('data-testid="report-facts"') :]
    table = text_of(table[: table.index("</table>")])
    assert "portfolio USD 3,200,000 amount" in table
    assert "70% of portfolio" in table
    assert "US-CA" in table and "California" in table
    assert "salary advisor USD 475,000" in table  # an advisor's fact is marked as one
    assert "“$3.2M portfolio”" in table  # the client's own words


def test_the_report_lists_each_finding_of_the_answer_and_the_failed_steps(client_of, alice, checked_session):
    html = client_of(alice).get(report_url(checked_session)).content.decode()
    answer = text_of(html[html.index('data-testid="report-answer-checks"') :].split("</ul>")[0])
    assert answer.index("with its scale dropped") < answer.index("is 70% of the portfolio")  # failed first
    assert 'data-testid="report-badge"' in html and 'data-tone="bad"' in html
    assert "a person's choice stands" in text_of(html)  # a promote stands; its findings are reported
    steps = text_of(html[html.index('data-testid="report-failed-steps"') :].split("</ol>")[0])
    assert steps.index("is the cost basis, not the salary") < steps.index("a UK rule")  # the answer's path first
    assert "on the answer's path" in steps
    assert "&lt;i&gt;UK&lt;/i&gt;" in html and "<i>UK" not in html
    assert "&lt;b&gt;$3.2&lt;/b&gt;" in html and "<b>$3.2" not in html


def test_a_report_with_no_facts_says_so(client_of, alice):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Use 4 4 6 8 to make 24.", mode="tot", model_primary="offline/sim"
    )
    html = client_of(alice).get(report_url(session)).content.decode()
    assert "No facts were read from the problem." in html
    assert 'data-testid="report-failed-steps"' not in html
