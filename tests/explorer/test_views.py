"""The explorer's pages: who may see what, the new-session form, and the tree page's embedded data."""

import json
import re
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from reasoning.models import ReasoningNode, ReasoningSession
from reasoning.strategies import available_modes

pytestmark = pytest.mark.django_db

LIST = reverse("explorer:session_list")
NEW = reverse("explorer:session_new")


def detail_url(session):
    return reverse("explorer:session_detail", kwargs={"session_id": session.id})


def make_session(party, text="Should the client rebalance toward bonds?", **fields):
    return ReasoningSession.objects.create(
        tenant=party.tenant, problem_text=text, mode="tot", model_primary="offline/sim", **fields
    )


@pytest.fixture
def client_of(client):
    def login(party):
        client.force_login(party.user)
        return client

    return login


def valid_form(**overrides):
    data = {
        "problem_text": "A client of 62 wants to retire in three years; how should the portfolio shift?",
        "problem_kind": "general",
        "mode": "auto",
        "budget_usd": "0.50",
        "tot-branching": "",
        "tot-depth": "",
        "tot-keep": "",
    }
    return {**data, **overrides}


@pytest.mark.parametrize("url", [LIST, NEW, "/sessions/00000000-0000-4000-8000-000000000000/"])
def test_it_requires_login(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_login_page_renders(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'name="username"' in response.content


def test_every_page_names_an_icon_that_is_served(client):
    # Without one the browser asks for /favicon.ico, gets a 404 and logs an error in the console of every page.
    page = client.get("/accounts/login/").content.decode()
    icon = re.search(r'<link rel="icon" href="([^"]+)"', page)
    assert icon and client.get(icon[1]).status_code == 200


def test_a_user_without_membership_gets_403(client, rubrics):
    loner = get_user_model().objects.create_user(username="loner", password="pw-for-tests")
    client.force_login(loner)
    assert client.get(LIST).status_code == 403
    assert client.get(NEW).status_code == 403
    assert client.post(NEW, valid_form()).status_code == 403
    assert ReasoningSession.objects.count() == 0


def test_list_shows_only_the_tenants_sessions(client_of, alice, bob):
    make_session(alice, text="Alice's question about municipal bonds")
    make_session(bob, text="Bob's question about a family trust")
    response = client_of(alice).get(LIST)
    assert response.status_code == 200
    assert b"municipal bonds" in response.content
    assert b"family trust" not in response.content


def test_list_filters_by_status_kind_and_mode(client_of, alice):
    make_session(alice, text="A solved thesis question", status="solved", problem_kind="investment-thesis")
    make_session(alice, text="A queued general question")
    client = client_of(alice)
    assert b"solved thesis" not in client.get(LIST, {"status": "queued"}).content
    assert b"solved thesis" in client.get(LIST, {"problem_kind": "investment-thesis"}).content
    assert b"queued general" not in client.get(LIST, {"problem_kind": "investment-thesis"}).content
    assert b"queued general" in client.get(LIST, {"mode": "tot"}).content
    # Nonsense filters and pages are ignored, not errors.
    assert client.get(LIST, {"status": "<x>", "mode": "nope", "page": "zzz"}).status_code == 200


def test_list_paginates_by_25(client_of, alice):
    for i in range(27):
        make_session(alice, text=f"Question number {i:02d} about cash flow")
    client = client_of(alice)
    first = client.get(LIST)
    assert first.context["page_obj"].paginator.num_pages == 2
    assert len(first.context["page_obj"].object_list) == 25
    second = client.get(LIST, {"page": 2, "status": "queued"})
    assert len(second.context["page_obj"].object_list) == 2
    assert b"status=queued" in second.content  # the pager keeps the filters


def test_another_tenants_session_is_404(client_of, alice, bob):
    theirs = make_session(bob)
    assert client_of(alice).get(detail_url(theirs)).status_code == 404


def test_an_unknown_session_is_404(client_of, alice):
    assert client_of(alice).get(f"/sessions/{uuid.uuid4()}/").status_code == 404


def test_a_malformed_id_is_404(client_of, alice):
    assert client_of(alice).get("/sessions/not-a-uuid/").status_code == 404


def test_new_session_form_has_defaults(client_of, alice):
    response = client_of(alice).get(NEW)
    assert response.status_code == 200
    form = response.context["form"]
    assert form["problem_kind"].value() == "general"
    assert form["mode"].value() == "auto"
    assert float(form["budget_usd"].value()) == 0.50
    kinds = [value for value, _ in form.fields["problem_kind"].choices]
    assert "general" in kinds and "investment-thesis" in kinds
    modes = [value for value, _ in form.fields["mode"].choices]
    assert set(modes) == {"auto"} | available_modes()  # only strategies that run are offered


def test_empty_problem_shows_the_error_on_the_field_and_stores_nothing(client_of, alice):
    response = client_of(alice).post(NEW, valid_form(problem_text=""))
    assert response.status_code == 200
    assert response.context["form"].errors["problem_text"]
    assert re.search(rb'id="id_problem_text_error"', response.content)
    assert ReasoningSession.objects.count() == 0


def test_a_too_short_problem_shows_the_schema_message(client_of, alice):
    response = client_of(alice).post(NEW, valid_form(problem_text="short"))
    assert response.status_code == 200
    assert "at least 10 characters" in response.context["form"].errors["problem_text"][0]
    assert ReasoningSession.objects.count() == 0


def test_a_mode_that_is_not_offered_is_a_field_error(client_of, alice):
    response = client_of(alice).post(NEW, valid_form(mode="mcts-9000"))
    assert response.status_code == 200
    assert "not one of the available choices" in response.context["form"].errors["mode"][0]
    assert ReasoningSession.objects.count() == 0


def test_bad_params_show_on_their_fields(client_of, alice):
    response = client_of(alice).post(NEW, valid_form(mode="tot", **{"tot-branching": "99", "tot-keep": "0"}))
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "tot-branching" in errors and "tot-keep" in errors
    assert ReasoningSession.objects.count() == 0


@pytest.mark.parametrize(
    "overrides",
    [
        {"budget_usd": "-1"},
        {"budget_usd": "1e9"},
        {"budget_usd": "nan"},
        {"budget_usd": "abc"},
        {"problem_kind": "no-such-kind"},
        {"mode": "<script>"},
        {"tot-depth": "1.5"},
        {"problem_text": "x" * 30_000},
    ],
)
def test_bad_input_is_a_form_error_never_a_500(client_of, alice, overrides):
    response = client_of(alice).post(NEW, valid_form(**overrides))
    assert response.status_code == 200
    assert response.context["form"].errors
    assert ReasoningSession.objects.count() == 0


def test_a_valid_post_creates_a_session_and_redirects_to_it(client_of, alice):
    response = client_of(alice).post(NEW, valid_form(mode="tot", **{"tot-branching": "2", "tot-depth": "3"}))
    session = ReasoningSession.objects.get()
    assert response.status_code == 302
    assert response["Location"] == detail_url(session)
    assert session.tenant == alice.tenant
    assert session.status == "queued"
    assert session.mode == "tot"
    assert session.params == {
        "branching": 2,
        "depth": 3,
        "keep": 2,
        "value_samples": 3,
        "value_mode": "score",
        "answer_width": 0,
        "value_by": "line",
        "answer_checker": False,
        "check_facts": True,
    }
    assert session.budget_usd == 0.50
    assert session.triggered_by == f"user:{alice.user.username}"  # one name per person, as the API's and a fork's
    assert session.created_by == alice.user and session.api_key is None  # for the usage report by person


def test_detail_page_embeds_the_tree_and_escapes_thoughts(client_of, alice):
    session = make_session(alice)
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=0, thought=session.problem_text)
    evil = "</script><script>alert('pwned')</script>"
    child = ReasoningNode.objects.create(
        tenant=alice.tenant,
        session=session,
        parent=root,
        depth=1,
        thought=evil,
        eval_score=0.7,
        model_used="offline/sim",
    )
    session.root_node = root
    session.save()

    response = client_of(alice).get(detail_url(session))
    assert response.status_code == 200
    html = response.content.decode()
    assert evil not in html
    assert "<script>alert(" not in html
    payload = re.search(r'<script id="tree-data" type="application/json">(.*?)</script>', html, re.S).group(1)
    tree = json.loads(payload)
    assert tree["session"]["id"] == str(session.id)
    assert {n["id"] for n in tree["nodes"]} == {str(root.id), str(child.id)}
    assert [n["thought"] for n in tree["nodes"] if n["id"] == str(child.id)] == [evil]
    assert f'data-ws-path="/ws/sessions/{session.id}/"' in html
    for testid in ("tree", "inspector", "inspector-thought", "session-status", "final-answer"):
        assert f'data-testid="{testid}"' in html


def test_detail_page_shows_the_offline_badges(client_of, alice, settings):
    settings.REASONING = {**settings.REASONING, "MODEL_PRIMARY": "offline/sim"}
    session = make_session(alice)
    html = client_of(alice).get(detail_url(session)).content.decode()
    assert "Offline model" in html  # the header badge
    assert re.search(r'id="session-offline"(?![^>]*hidden)', html)


def test_header_has_no_offline_badge_with_a_real_model(client_of, alice, settings):
    settings.REASONING = {**settings.REASONING, "MODEL_PRIMARY": "openai/gpt-4o-mini"}
    assert "Offline model" not in client_of(alice).get(LIST).content.decode()


def test_admin_link_is_for_staff_only(client_of, alice):
    client = client_of(alice)
    assert 'href="/admin/"' not in client.get(LIST).content.decode()
    alice.user.is_staff = True
    alice.user.save()
    assert 'href="/admin/"' in client.get(LIST).content.decode()


def test_an_empty_post_shows_required_errors(client_of, alice):
    response = client_of(alice).post(NEW, {})
    assert response.status_code == 200
    assert response.context["form"].errors["problem_text"]
    assert ReasoningSession.objects.count() == 0


def test_the_form_offers_each_built_strategy_with_its_declared_params(client_of, alice):
    from reasoning.strategies import strategy_labels

    html = client_of(alice).get(NEW).content.decode()
    for mode, label in strategy_labels():
        assert f'<option value="{mode}"' in html and f'data-mode="{mode}"' in html
    # Limits and defaults come from the strategy's Params schema.
    assert 'name="tot-branching"' in html and 'max="8"' in html and 'placeholder="3"' in html
    # The search-quality params too: a value mode to choose, samples, memory, rollout and self-consistency.
    assert 'name="tot-value_mode"' in html and '<option value="categorical">' in html
    for name in ("tot-value_samples", "lats-rollout_samples", "lats-consistency", "reflexion-memory"):
        assert f'name="{name}"' in html, name


def test_the_value_mode_and_samples_reach_the_session(client_of, alice):
    form = valid_form(mode="tot", **{"tot-value_mode": "categorical", "tot-value_samples": "5"})
    response = client_of(alice).post(NEW, form)
    session = ReasoningSession.objects.get()
    assert response.status_code == 302 and session.params["value_mode"] == "categorical"
    assert session.params["value_samples"] == 5
    assert client_of(alice).post(NEW, valid_form(mode="tot", **{"tot-value_mode": "vibes"})).status_code == 200


# ---- the sessions list: search, node counts, one query count whatever the page holds ----------------


def add_nodes(party, session, count):
    root = ReasoningNode.objects.create(tenant=party.tenant, session=session, depth=0, thought="root")
    for i in range(count - 1):
        ReasoningNode.objects.create(tenant=party.tenant, session=session, parent=root, depth=1, thought=f"step {i}")


def test_list_search_finds_words_in_the_problem(client_of, alice, bob):
    make_session(alice, text="Should the client fund a Family Trust this year?")
    make_session(alice, text="How much cash should the client keep?")
    make_session(bob, text="Bob's own family trust question")
    response = client_of(alice).get(LIST, {"q": "family trust"})
    html = response.content.decode()
    assert "fund a Family Trust this year" in html and "keep?" not in html
    assert "Bob&#x27;s own" not in html and "Bob's own" not in html
    assert 'value="family trust"' in html  # the box keeps the query


def test_list_shows_node_counts_answer_preview_duration_and_who_started_it(client_of, alice):
    session = make_session(
        alice, status="solved", final_answer="Move 30% into bonds\nover two years.", triggered_by="web:alice-advisor"
    )
    add_nodes(alice, session, 7)
    html = client_of(alice).get(LIST).content.decode()
    assert re.search(r'data-testid="node-count">7<', html)
    assert "Move 30% into bonds over two years." in html
    assert "web:alice-advisor" in html
    assert 'role="progressbar"' in html


def test_list_costs_the_same_queries_for_3_or_30_sessions(client_of, alice, django_assert_max_num_queries):
    client = client_of(alice)
    for i in range(3):
        add_nodes(alice, make_session(alice, text=f"Question {i} about income", final_answer="An answer"), 3)
    client.get(LIST)  # warm the session and rubric lookups

    def queries_for_page():
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as ctx:
            assert client.get(LIST, {"q": "income"}).status_code == 200
        return len(ctx.captured_queries)

    few = queries_for_page()
    for i in range(27):
        add_nodes(alice, make_session(alice, text=f"More {i} about income", final_answer="An answer"), 3)
    with django_assert_max_num_queries(few):
        client.get(LIST, {"q": "income"})


def test_the_status_poll_answers_for_the_tenants_sessions_only(client_of, alice, bob):
    mine = make_session(alice, status="running")
    add_nodes(alice, mine, 4)
    theirs = make_session(bob, status="running")
    url = reverse("explorer:session_statuses")
    data = client_of(alice).get(url, {"ids": f"{mine.id},{theirs.id},not-a-uuid"}).json()
    assert [s["id"] for s in data["sessions"]] == [str(mine.id)]
    assert data["sessions"][0]["node_count"] == 4 and data["sessions"][0]["is_live"] is True


# ---- the new-session form: auto's pick, models, plain errors -------------------------------------------


def test_auto_mode_says_what_it_would_pick_and_why(client_of, alice):
    url = reverse("explorer:auto_mode")
    data = client_of(alice).get(url, {"kind": "investment-thesis", "text": ""}).json()
    assert data["mode"] == "tot" and "investment thesis" in data["reason"]
    data = client_of(alice).get(url, {"kind": "general", "text": "Please look up the fund prices"}).json()
    assert data["mode"] in available_modes() and data["reason"].startswith("auto:")


def test_auto_mode_needs_a_login(client):
    assert client.get(reverse("explorer:auto_mode")).status_code == 302


def test_param_errors_are_in_plain_words_and_name_their_strategy(client_of, alice):
    response = client_of(alice).post(NEW, valid_form(mode="tot", **{"tot-branching": "99", "tot-keep": "0"}))
    errors = response.context["form"].errors
    assert errors["tot-branching"] == ["at most 8"]
    assert errors["tot-keep"][0] in ("at least 1", "more than 0")
    assert 'data-error-mode="tot"' in response.content.decode()


def test_the_form_takes_a_model_and_a_fallback(client_of, alice, settings):
    html = client_of(alice).get(NEW).content.decode()
    assert f'placeholder="{settings.REASONING["MODEL_PRIMARY"]}"' in html
    client_of(alice).post(NEW, valid_form(model_primary="offline/sim", model_fallback="offline/sim"))
    session = ReasoningSession.objects.get()
    assert session.model_primary == "offline/sim" and session.model_fallback == "offline/sim"


@pytest.mark.parametrize(
    "message, plain",
    [
        ("Input should be less than or equal to 8", "at most 8"),
        ("Input should be greater than 0", "more than 0"),
        ("Input should be greater than or equal to 1", "at least 1"),
        (
            "Value error, describe the problem in at least 10 characters",
            "describe the problem in at least 10 characters",
        ),
    ],
)
def test_pydantic_messages_become_plain_words(message, plain):
    from explorer.presenters import plain_message

    assert plain_message(message) == plain


# ---- the printable report ---------------------------------------------------------------------------


def report_url(session):
    return reverse("explorer:session_report", kwargs={"session_id": session.id})


def test_the_report_shows_the_answer_and_the_path_with_scores(client_of, alice):
    session = make_session(
        alice,
        status="solved",
        termination_reason="solved",
        final_answer="Sell in three tranches.",
        budget_used_usd=0.026518999999999997,
    )
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=0, thought=session.problem_text)
    step = ReasoningNode.objects.create(
        tenant=alice.tenant,
        session=session,
        parent=root,
        depth=1,
        thought="<b>Split</b> the sale",
        eval_score=0.82,
        eval_reason="Spreads the tax",
    )
    ReasoningNode.objects.create(tenant=alice.tenant, session=session, parent=root, depth=1, thought="A losing idea")
    session.root_node, session.final_node = root, step
    session.save()
    html = client_of(alice).get(report_url(session)).content.decode()
    assert "Sell in three tranches." in html
    assert "&lt;b&gt;Split&lt;/b&gt; the sale" in html and "<b>Split" not in html
    assert "0.82" in html and "Spreads the tax" in html
    assert "A losing idea" not in html
    assert "0.0265 USD" in html and "Solved" in html


def test_the_report_says_why_a_session_stopped(client_of, alice):
    session = make_session(
        alice, status="exhausted", termination_reason="budget", final_answer="Best so far", answer_partial=True
    )
    html = client_of(alice).get(report_url(session)).content.decode()
    assert "Stopped: the budget is spent" in html and "Partial" in html


def test_another_tenants_report_is_404(client_of, alice, bob):
    assert client_of(alice).get(report_url(make_session(bob))).status_code == 404


@pytest.mark.django_db(transaction=True)  # solve() runs the session on its own event loop and connection
def test_a_fork_is_shown_beside_its_parent_with_the_shared_steps_marked(client_of, alice, bob):
    from django.utils.html import escape

    from reasoning import services
    from reasoning.schemas import SessionIn

    parent = services.solve(
        alice.tenant,
        SessionIn(problem_text="Sell the <b>family</b> stake in three tranches?", mode="tot", params={"depth": 2}),
    )
    fork = services.fork_session(alice.tenant, parent.id, "user:tester", parent.final_node_id, mode="tot")
    fork.final_answer, fork.status = "Keep the stake <script>alert(1)</script> and hedge it.", "solved"
    fork.final_node = ReasoningNode.objects.filter(session=fork).order_by("-depth").first()
    fork.save()
    url = reverse("explorer:session_beside_parent", kwargs={"session_id": fork.id})
    html = client_of(alice).get(url).content.decode()
    assert escape(parent.final_answer.split("\n")[0][:40]) in html  # the parent's answer, as text
    assert "Keep the stake &lt;script&gt;" in html and "<script>alert" not in html
    assert html.count('class="shared"') == fork.final_node.depth  # the copied path, root excluded
    assert "&lt;b&gt;family&lt;/b&gt;" in html
    detail = client_of(alice).get(detail_url(fork)).content.decode()
    assert url in detail  # the fork's page links to it
    assert (
        client_of(alice).get(reverse("explorer:session_beside_parent", kwargs={"session_id": parent.id})).status_code
        == 404
    )
    assert client_of(bob).get(url).status_code == 404


def test_the_report_marks_edited_and_stale_steps_and_keeps_the_timeline(client_of, alice):
    from django.utils import timezone

    start = timezone.now() - timezone.timedelta(minutes=5)
    session = make_session(
        alice,
        status="cancelled",
        termination_reason="cancelled",
        final_answer="Sell in three tranches.",
        answer_chosen_by="user:alice",
        started_at=start,
        resumed_at=start + timezone.timedelta(minutes=4),  # a later run (the promote's) began here
        active_seconds=35.0,
        ended_status="cancelled",
        ended_at=start + timezone.timedelta(seconds=40),
        finished_at=start + timezone.timedelta(minutes=4),
    )
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=0, thought=session.problem_text)
    edited = ReasoningNode.objects.create(
        tenant=alice.tenant,
        session=session,
        parent=root,
        depth=1,
        thought="Sell a third each year.",
        original_thought="Sell it all now.",
        edited_at=timezone.now(),
        stale=True,
    )
    stale = ReasoningNode.objects.create(
        tenant=alice.tenant, session=session, parent=edited, depth=2, thought="Then gift the rest.", stale=True
    )
    session.root_node, session.final_node = root, stale
    session.save()
    html = client_of(alice).get(report_url(session)).content.decode()
    assert html.count('data-testid="report-edited"') == 1 and "Sell it all now." in html
    assert html.count('data-testid="report-stale"') == 2
    assert "35 s of running" in html  # active time, not the 4 minutes from the first start to the promote
    assert 'data-testid="report-ended"' in html and "cancelled" in html
