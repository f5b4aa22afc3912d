"""The README's API example runs as written (issue 16, item 11): a key of the demo tenant, a session the advisor
sees, on the port make run was given. This module is also imported by the spawned server process, so it imports no
Django models at the top."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from channels.testing import ChannelsLiveServerTestCase
from django.db import connections

from tests.e2e.live import SpawnedDaphneProcess

ROOT = Path(__file__).resolve().parents[1]


def readme_example():
    text = (ROOT / "README.md").read_text()
    marker = text.index("<!-- api-example")
    return re.search(r"```sh\n(.*?)```", text[marker:], re.S).group(1)


def test_the_example_uses_the_demo_tenant_and_the_port_make_run_was_given():
    script = readme_example()
    assert "create_api_key demo" in script and "$PORT" in script
    assert "PORT=" in (ROOT / "README.md").read_text().split("<!-- api-example")[0].rsplit("## The API", 1)[1]


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "python").exists(), reason="the example calls .venv/bin/python")
class ReadmeExampleTest(ChannelsLiveServerTestCase):
    ProtocolServerProcess = SpawnedDaphneProcess

    def setUp(self):
        from django.contrib.auth import get_user_model

        from reasoning.fixtures import load_rubrics
        from reasoning.models import Membership, Role, Tenant

        load_rubrics()
        self.demo = Tenant.objects.create(slug="demo", name="Demo")
        self.advisor = get_user_model().objects.create_user(username="advisor", password="advisor")
        Membership.objects.create(user=self.advisor, tenant=self.demo, role=Role.ADMIN)

    def test_the_readme_api_example_runs_as_written(self):
        from reasoning.models import ReasoningSession

        port = self.live_server_url.rsplit(":", 1)[1]
        database = connections["default"].settings_dict["NAME"]
        env = {**os.environ, "PORT": port, "DATABASE_URL": f"sqlite:///{database}"}
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", readme_example()],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        link, tree = done.stdout.strip().split("\n", 1)
        session = ReasoningSession.objects.get()
        assert session.tenant == self.demo  # the advisor's tenant: it shows in their explorer
        assert link == f"In the explorer: http://127.0.0.1:{port}/sessions/{session.id}/"
        assert json.loads(tree)["session"]["id"] == str(session.id)
        self.client.force_login(self.advisor)
        assert self.client.get(f"/sessions/{session.id}/").status_code == 200
