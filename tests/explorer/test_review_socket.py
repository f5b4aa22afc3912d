"""Four eyes over the socket (issue 34, section 3): a key client sends `{"action": "review", "decision", "comment"}`
with the API's rules, and every watcher receives the `review.updated` event; a refusal is an error message naming
the scope or the field, never a dropped socket."""

import pytest
from asgiref.sync import sync_to_async

from reasoning.models import ApiKey, OverseerAction, ReasoningSession, Role, Scope
from tests.explorer.test_consumers import key_socket
from tests.reasoning.test_review import answered, four_eyes, member  # noqa: F401  (four_eyes: a fixture)

pytestmark = pytest.mark.django_db(transaction=True)



async def socket_of(session, party, user=None, scopes=(Scope.READ,)):
    _, plaintext = await sync_to_async(ApiKey.issue)(party.tenant, scopes=list(scopes), user=user)
    return await key_socket(session, plaintext)


async def next_of(ws, kind):
    for _ in range(20):
        message = await ws.receive_json_from(timeout=10)
        if message["type"] == kind:
            return message
    raise AssertionError(f"no {kind} message")


async def test_a_reviewer_approves_over_the_socket_and_every_watcher_gets_the_review_event(four_eyes):
    session = await sync_to_async(answered)(four_eyes)
    watcher = await socket_of(session, four_eyes)
    reviewer = await socket_of(session, four_eyes, four_eyes.rita, [Scope.READ, Scope.REVIEW])
    await reviewer.send_json_to({"action": "review", "decision": "request_changes", "comment": "Name the tranches."})
    for ws in (reviewer, watcher):
        event = await next_of(ws, "review.updated")
        assert event["session_id"] == str(session.id) and event["seq"] > 0
        assert event["review"]["state"] == "changes_requested" and event["review"]["by"] == "user:rita"
        assert event["review"]["comment"] == "Name the tranches."
    await reviewer.send_json_to({"action": "review", "decision": "approve"})
    received = [await watcher.receive_json_from(timeout=10) for _ in range(2)]  # the audit row and the review
    by_type = {m["type"]: m for m in received}
    assert by_type["review.updated"]["review"]["state"] == "approved"
    audit = by_type["action.created"]["action"]
    assert audit["action"] == "review.approve" and audit["actor"].startswith("user:rita/key:")
    await watcher.disconnect()
    await reviewer.disconnect()


async def test_a_watcher_sees_the_withdrawal_when_the_answer_changes(four_eyes):
    from reasoning import services

    session = await sync_to_async(answered)(four_eyes, state="approved")
    await ReasoningSession.objects.filter(pk=session.pk).aupdate(review_by="user:rita")
    watcher = await socket_of(session, four_eyes)
    await sync_to_async(services.edit_node)(four_eyes.tenant, session.step.id, "user:alice-advisor", "a better step")
    event = await next_of(watcher, "review.updated")
    assert event["review"]["state"] == "awaiting"
    reason = "approval by user:rita withdrawn: user:alice-advisor edited step 1 of the answer's line"
    assert event["review"]["reason"] == reason
    await watcher.disconnect()


@pytest.mark.parametrize("role, scopes", [(Role.VIEWER, [Scope.READ]), (Role.ADVISOR, [Scope.READ, Scope.OVERSEE])])
async def test_a_viewer_or_an_advisor_cannot_review_over_the_socket(four_eyes, role, scopes):
    session = await sync_to_async(answered)(four_eyes)
    user = await sync_to_async(member)(four_eyes, f"someone-{role}", role)
    ws = await socket_of(session, four_eyes, user, scopes)
    await ws.send_json_to({"action": "review", "decision": "approve"})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and reply["scope"] == "review" and "'review' scope" in reply["detail"]
    assert not await OverseerAction.objects.filter(session_id=session.id).aexists()
    await ws.send_json_to({"action": "snapshot"})  # the socket is still open
    assert (await ws.receive_json_from())["type"] == "snapshot"
    await ws.disconnect()


@pytest.mark.parametrize(
    "message, expected",
    [
        ({"decision": "request_changes"}, {"field": "comment"}),
        ({"decision": "maybe"}, {"field": "decision"}),
        ({"decision": "approve", "self": True}, {"field": "self"}),
    ],
)
async def test_a_bad_review_message_gets_an_error_naming_the_field(four_eyes, message, expected):
    session = await sync_to_async(answered)(four_eyes)
    ws = await socket_of(session, four_eyes, four_eyes.rita, [Scope.READ, Scope.REVIEW])
    await ws.send_json_to({"action": "review", **message})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and reply["action"] == "review" and reply["field"] == expected["field"]
    await ws.disconnect()


async def test_the_one_who_ran_it_is_told_why_they_cannot_approve(four_eyes):
    session = await sync_to_async(answered)(four_eyes, state="awaiting")
    await ReasoningSession.objects.filter(pk=session.pk).aupdate(triggered_by="user:rita")
    ws = await socket_of(session, four_eyes, four_eyes.rita, [Scope.READ, Scope.REVIEW])
    await ws.send_json_to({"action": "review", "decision": "approve"})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and "user:rita ran this session" in reply["detail"]
    assert (await ReasoningSession.objects.aget(pk=session.pk)).review_state == "awaiting"
    await ws.disconnect()
