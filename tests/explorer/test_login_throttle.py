"""Logins (issue 23, item 4): the limit is keyed on the name as Django resolves it, and a stranger's failures cost
the stranger (per address and name together, with a lock-out that doubles), not the user."""

import pytest
from django.contrib.auth import get_user_model

from reasoning import throttles

pytestmark = pytest.mark.django_db

LOOK_ALIKES = ["ｂｏｂ", "𝐛𝐨𝐛", "ᵇᵒᵇ", "𝒷ℴ𝒷", " BOB "]
STRANGER, OWN = "203.0.113.9", "198.51.100.7"


@pytest.fixture
def bob_user(settings):
    settings.REASONING = {**settings.REASONING, "LOGIN_RATE": (5, 300), "LOGIN_IP_RATE": (50, 300)}
    return get_user_model().objects.create_user(username="bob", password="bobs-password")


@pytest.fixture
def clock(monkeypatch):
    now = {"t": 1_000_000.0}
    monkeypatch.setattr(throttles, "clock", lambda: now["t"])
    return now


def login(client, username, password, address=STRANGER, url="/accounts/login/"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def test_each_look_alike_of_a_throttled_name_is_throttled_with_it(client, bob_user, clock):
    assert [login(client, "bob", f"guess-{i}").status_code for i in range(5)] == [200] * 5
    for name in LOOK_ALIKES:
        refused = login(client, name, "bobs-password")
        assert refused.status_code == 429, name  # today: each logged in as bob, with bob's password
        assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_look_alikes_share_one_allowance(client, bob_user, clock, url):
    codes = [login(client, name, "wrong", url=url).status_code for name in ["bob", *LOOK_ALIKES]]
    assert codes == [200] * 5 + [429]


def test_a_strangers_failures_do_not_lock_the_user_out(client, bob_user, clock):
    assert [login(client, "bob", f"guess-{i}").status_code for i in range(7)] == [200] * 5 + [429] * 2
    assert login(client, "bob", "bobs-password", address=OWN).status_code == 302  # bob, from his own address


def test_a_pair_that_runs_out_again_waits_twice_as_long(client, bob_user, clock):
    for _ in range(5):
        login(client, "bob", "wrong")
    first = login(client, "bob", "wrong")
    assert first.status_code == 429 and int(first["Retry-After"]) <= 330
    clock["t"] += 331
    assert [login(client, "bob", "wrong").status_code for _ in range(6)] == [200] * 5 + [429]
    second = login(client, "bob", "wrong")
    assert second.status_code == 429 and int(second["Retry-After"]) >= 600  # 2 x 5 minutes
    clock["t"] += 331
    assert login(client, "bob", "wrong").status_code == 429  # still locked


def test_a_login_that_works_costs_nothing(client, bob_user, clock):
    for _ in range(4):
        login(client, "bob", "wrong")
    for _ in range(3):
        assert login(client, "bob", "bobs-password").status_code == 302
        client.logout()
    assert login(client, "bob", "wrong").status_code == 200  # the fifth failure, not the eighth attempt
    assert login(client, "bob", "wrong").status_code == 429
