"""Row-level security on PostgreSQL (reasoning/rls.py): the database's own wall behind each query's tenant filter.

CI connects as `postgres`, a superuser, whom row-level security never binds: code that names no tenant sees every
row there, as migrations and these tests' fixtures need. The `owner` fixture makes such code run as the app's role
with no tenant instead, which is what a connection as the tables' (non-superuser) owner meets in production: it
shows which paths name their tenant or go through all_tenants(), and that a path that forgets sees nothing.
"""

import io
import json
import os
import subprocess
import sys

import psycopg
import pytest
from asgiref.sync import sync_to_async
from django.apps import apps
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from reasoning import recovery, rls, selectors, services
from reasoning.models import ReasoningNode, ReasoningSession, Rubric, RubricCriterion, Tenant
from reasoning.schemas import SessionIn
from tests.test_restart import ROOT, database_url

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="row-level security is PostgreSQL's")

# Every model of the app holds one tenant's rows (or shared rubrics): a new model is behind the wall or named here.
# What the gateway has seen of a model's server (ModelMeter) is no tenant's: every tenant's calls on the model add to it.
OUTSIDE_THE_WALL = {"reasoning_modelmeter"}


def new_session(party, text="Should the family sell the CHF 5m stake?"):
    data = SessionIn(problem_text=text, mode="tot", params={"branching": 1, "depth": 1, "keep": 1})
    return services.create_session(party.tenant, data, triggered_by="tests", submit=False)


@pytest.fixture
def owner(monkeypatch):
    """Code that names no tenant runs as the app's role with none, as under a connection as the tables' owner."""
    monkeypatch.setattr(rls, "PLAIN", (rls.ROLE, ""))


@pytest.fixture
def no_filter(monkeypatch):
    """The selectors' tenant filter, forgotten (the test-only switch)."""
    monkeypatch.setattr(selectors, "TENANT_FILTER", False)


def query(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@pytest.mark.django_db
def test_every_table_of_the_app_has_a_forced_policy():
    tables = {m._meta.db_table for m in apps.get_app_config("reasoning").get_models()} - OUTSIDE_THE_WALL
    policies = dict(query("SELECT tablename, policyname FROM pg_policies WHERE schemaname = 'public'"))
    forced = {
        name
        for name, on, force in query("SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class")
        if on and force
    }
    assert {t: policies.get(t) for t in tables} == {t: rls.POLICY for t in tables}
    assert tables <= forced


@pytest.mark.django_db
def test_the_apps_role_is_bound_by_row_level_security_and_the_doors_is_not():
    sql = "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s"
    assert query(sql, [rls.ROLE]) == [(False, False)]
    assert query(sql, [rls.DOOR_ROLE]) == [(False, True)]


@pytest.mark.django_db
def test_a_statement_that_sets_the_value_all_sees_no_tenant(alice, bob):
    """The value 'all' opened every tenant to any statement on the app's connection (issue 32, section 3); the door
    is a role now, and a setting that is not a tenant's number matches no row."""
    new_session(alice), new_session(bob)
    with rls.tenant(alice.tenant.pk):
        assert ReasoningSession.objects.count() == 1
        query("SELECT set_config('app.tenant_id', 'all', false)")  # as an injected statement would
        assert ReasoningSession.objects.count() == 0
        assert query("SELECT count(*) FROM reasoning_tenant") == [(0,)]
        query("SELECT set_config('app.tenant_id', '1 OR true', false)")
        assert ReasoningSession.objects.count() == 0


@pytest.fixture
def login(transactional_db):
    """A connection of its own as one of the app's roles, given its login as `make run-scaled` gives it."""
    call_command("db_logins", stdout=io.StringIO())
    db = connection.settings_dict

    def connect(role):
        dsn = {"host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432, "dbname": db["NAME"]}
        return psycopg.connect(**dsn, user=role, password=rls.password(role), autocommit=True)

    return connect


def test_the_apps_login_sees_no_tenant_by_the_value_all_and_cannot_become_the_door(login, alice, bob):
    new_session(alice), new_session(bob)
    with login(rls.ROLE) as app:
        assert app.execute("SELECT current_user, count(*) FROM reasoning_reasoningsession").fetchone() == (rls.ROLE, 0)
        app.execute(f"SET {rls.SETTING} = 'all'")
        assert app.execute("SELECT count(*) FROM reasoning_reasoningsession").fetchone() == (0,)
        app.execute(f"SET {rls.SETTING} = {alice.tenant.pk}")
        assert app.execute("SELECT count(*) FROM reasoning_reasoningsession").fetchone() == (1,)
        for other in (rls.DOOR_ROLE, connection.settings_dict["USER"]):  # the door, the tables' owner
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                app.execute(f"SET ROLE {other}")
    with login(rls.DOOR_ROLE) as door:
        assert door.execute("SELECT count(*) FROM reasoning_reasoningsession").fetchone() == (2,)


@pytest.mark.django_db
def test_a_read_that_forgets_its_tenant_filter_finds_nothing_of_another_tenant(client, alice, bob, no_filter):
    theirs, mine = new_session(bob), new_session(alice)
    assert client.get(f"/api/sessions/{theirs.id}/tree", **alice.auth).status_code == 404
    assert client.get(f"/api/sessions/{theirs.id}", **alice.auth).status_code == 404
    listed = client.get("/api/sessions", **alice.auth).json()["items"]
    assert [s["id"] for s in listed] == [str(mine.id)]
    assert client.get(f"/api/sessions/{mine.id}/tree", **alice.auth).status_code == 200


@pytest.mark.django_db
def test_without_the_wall_the_forgotten_filter_would_leak(client, alice, bob, no_filter, monkeypatch):
    """The control for the test above: the switch really removes the filter, and only the wall held."""
    monkeypatch.setattr(rls, "ENABLED", False)
    theirs = new_session(bob)
    assert client.get(f"/api/sessions/{theirs.id}/tree", **alice.auth).status_code == 200


@pytest.mark.django_db
def test_code_that_names_no_tenant_sees_nothing_and_all_tenants_sees_all(alice, bob, owner):
    with rls.all_tenants():
        new_session(alice), new_session(bob)
    assert ReasoningSession.objects.count() == 0
    assert Tenant.objects.count() == 0
    with rls.all_tenants():
        assert ReasoningSession.objects.count() == 2
    with rls.tenant(alice.tenant.pk):
        assert set(ReasoningSession.objects.values_list("tenant_id", flat=True)) == {alice.tenant.pk}
        assert list(Tenant.objects.values_list("slug", flat=True)) == ["alice"]


@pytest.mark.django_db
def test_a_setting_undone_by_a_rollback_is_made_again(alice, bob, owner):
    with rls.all_tenants():
        mine, _ = new_session(alice), new_session(bob)  # the connection now sees every tenant
    with rls.tenant(alice.tenant.pk):
        with pytest.raises(RuntimeError), transaction.atomic():
            assert ReasoningSession.objects.count() == 1  # Alice's setting, made inside the block
            raise RuntimeError
        # The rollback put the connection back to every tenant: Alice's setting is made again before the next query.
        assert list(ReasoningSession.objects.values_list("pk", flat=True)) == [mine.pk]


@pytest.mark.django_db
def test_a_tenant_cannot_write_a_row_of_another_tenant(alice, bob):
    theirs = new_session(bob)
    with rls.tenant(alice.tenant.pk):
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            ReasoningNode.objects.create(tenant=bob.tenant, session=theirs, depth=0, thought="planted")
        with transaction.atomic():
            assert ReasoningSession.objects.filter(pk=theirs.pk).update(final_answer="changed") == 0


@pytest.mark.django_db
def test_rubrics_shared_ones_read_by_all_written_only_past_the_wall(alice, bob):
    with rls.all_tenants():
        mine = Rubric.objects.create(tenant=alice.tenant, problem_kind="estate", name="Alice's")
        RubricCriterion.objects.create(rubric=mine, name="clarity")
    with rls.tenant(bob.tenant.pk):
        kinds = set(Rubric.objects.values_list("problem_kind", flat=True))
        assert "estate" not in kinds and "general" in kinds  # the shared ones, not Alice's
        assert not RubricCriterion.objects.filter(rubric_id=mine.pk).exists()
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            Rubric.objects.create(tenant=None, problem_kind="planted", name="A shared one")
        shared = Rubric.objects.get(tenant=None, problem_kind="general")
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            RubricCriterion.objects.create(rubric=shared, name="planted")


@pytest.mark.django_db
def test_a_request_names_its_tenant_from_its_key_or_login(client, alice, bob, owner):
    with rls.all_tenants():
        mine, theirs = new_session(alice), new_session(bob)
    assert client.get(f"/api/sessions/{mine.id}/tree", **alice.auth).status_code == 200
    assert client.get(f"/api/sessions/{theirs.id}/tree", **alice.auth).status_code == 404
    client.force_login(alice.user)
    assert client.get(f"/sessions/{mine.id}/").status_code == 200
    assert client.get(f"/api/sessions/{mine.id}").status_code == 200


@pytest.mark.django_db
def test_operators_commands_and_the_sweeper_see_every_tenant(alice, bob, owner):
    call_command("create_api_key", "carol", "--name", "ops")
    with rls.all_tenants():
        assert Tenant.objects.filter(slug="carol").exists()
        queued, running = new_session(alice), new_session(bob)
        ReasoningSession.objects.filter(pk=running.pk).update(status="running")
    assert services.interrupt_running() == 1
    assert recovery.sweep() == []  # the queued one is marked as seen, not yet dispatched again
    with rls.all_tenants():
        assert ReasoningSession.objects.get(pk=queued.pk).dispatched_at is not None
        assert ReasoningSession.objects.get(pk=running.pk).status == "interrupted"


@pytest.mark.django_db(transaction=True)
async def test_a_run_works_for_its_sessions_tenant(alice, runner, owner):
    def create():
        with rls.all_tenants():
            return new_session(alice)

    session = await sync_to_async(create)()
    runner.submit(session.id)
    await runner.drain()

    def outcome():
        with rls.all_tenants():
            return ReasoningSession.objects.get(pk=session.id).status, ReasoningNode.objects.count()

    status, nodes = await sync_to_async(outcome)()
    assert status == "solved" and nodes > 1


@pytest.mark.django_db(transaction=True)
async def test_a_socket_works_for_its_keys_tenant(alice, bob, runner, owner):
    from channels.testing import WebsocketCommunicator

    from config.asgi import application

    def create():
        with rls.all_tenants():
            return new_session(alice), new_session(bob)

    mine, theirs = await sync_to_async(create)()
    ws = WebsocketCommunicator(application, f"/ws/sessions/{mine.id}/?token={alice.key}")
    assert (await ws.connect())[0]
    snapshot = await ws.receive_json_from(timeout=10)
    assert snapshot["type"] == "snapshot" and snapshot["session"]["id"] == str(mine.id)
    await ws.send_json_to({"action": "cancel"})
    statuses = set()
    while "cancelled" not in statuses:  # its action's event may come first
        message = await ws.receive_json_from(timeout=10)
        statuses.add(message.get("session", {}).get("status") if message["type"] == "session.updated" else None)
    await ws.disconnect()
    other = WebsocketCommunicator(application, f"/ws/sessions/{theirs.id}/?token={alice.key}")
    connected, code = await other.connect()
    await other.disconnect()
    assert (connected, code) == (False, 4404)


# What a server or worker of `make run-scaled` does past the wall, in a process started with scripts/scaled.py's
# environment for them: who it logs in as, and the sweeper's and recovery's paths through the door.
PROCESS = """
import json
import django
django.setup()
from django.db import DatabaseError, connection, connections
from reasoning import recovery, rls, services
from reasoning.models import ReasoningSession

def who():
    with connection.cursor() as cursor:
        cursor.execute("SELECT session_user, current_user")
        return cursor.fetchone()

seen = {"app": who(), "app sees": ReasoningSession.objects.count()}
with rls.all_tenants():
    seen |= {"door": who(), "door sees": ReasoningSession.objects.count()}
seen["adopted"] = recovery.adopt(json.loads(input()))  # a dead run's session: taken over in a locking transaction
seen["interrupted"] = services.interrupt_running()
try:
    with connections[rls.DOOR_ALIAS].cursor() as cursor:
        cursor.execute("SELECT 1")  # the door's connection, outside all_tenants()
    seen["door outside"] = "ran"
except DatabaseError:
    seen["door outside"] = "refused"
print(json.dumps(seen))
"""


def test_the_scaled_profiles_processes_log_in_as_the_apps_role_and_pass_the_wall_by_the_door(login, alice, bob):
    sys.path.insert(0, str(ROOT / "scripts"))
    from scaled import Scaled

    with rls.all_tenants():
        queued, dead, running = new_session(alice), new_session(bob), new_session(bob)
        ReasoningSession.objects.filter(pk=dead.pk).update(status="running", run_owner="gone:1:dead")
        ReasoningSession.objects.filter(pk=running.pk).update(status="running")
    profile = Scaled(database_url(), os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    assert profile.owner_env["DATABASE_URL"] == database_url()  # migrate and the commands run as the owner
    done = subprocess.run(
        [sys.executable, "-c", PROCESS], input=f'"{dead.pk}"', env=profile.env, cwd=ROOT, capture_output=True,
        text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "app": [rls.ROLE, rls.ROLE],
        "app sees": 0,
        "door": [rls.DOOR_ROLE, rls.DOOR_ROLE],
        "door sees": 3,
        "adopted": True,
        "interrupted": 1,
        "door outside": "refused",
    }
    with rls.all_tenants():
        statuses = dict(ReasoningSession.objects.values_list("pk", "status"))
    assert statuses == {queued.pk: "queued", dead.pk: "queued", running.pk: "interrupted"}
