"""The scale-out profile on one machine: two Daphne servers and two Celery workers on PostgreSQL + Redis.

`make run-scaled` runs this: it migrates the database named by DATABASE_URL, seeds the demo tenant, then serves
on ports 8000 and 8001 (PORT, PORT + 1) with TASK_RUNNER=celery, each worker a prefork pool of two children, until
Ctrl-C. The chaos test (tests/chaos) drives the same class with its own Redis and database.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
from config import serving  # noqa: E402


class Scaled:
    """Two (or more) Daphne servers and Celery workers as separate processes, their output in log files."""

    def __init__(self, database_url, redis_url, ports=(8000, 8001), workers=2, concurrency=2, env=None, logs=None):
        self.ports, self.workers, self.concurrency = list(ports), workers, concurrency
        self.logs = Path(logs or tempfile.mkdtemp(prefix="reasoning-scaled-"))
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "TASK_RUNNER": "celery",
            **(env or {}),
        }
        self.env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.servers, self.celery = {}, {}

    def manage(self, *args):
        subprocess.run([str(BIN / "python"), "manage.py", *args], cwd=ROOT, env=self.env, check=True)

    def start(self):
        for port in self.ports:
            self.start_server(port)
        for index in range(self.workers):
            self.start_worker(index)
        # Each process imports litellm as it starts (seconds on an idle core; minutes for four at once on a busy one).
        for index in range(self.workers):
            self.wait(lambda i=index: "ready." in self.log(f"worker-{i}"), f"worker {index} to be ready", 300)
        for port in self.ports:
            self.wait(lambda p=port: self.listening(p), f"the server on port {port} to listen", 300)
        return self

    def start_server(self, port):
        # The same flags as `make run` (config/serving.py): one list for both profiles.
        self.servers[port] = self._spawn(f"daphne-{port}", serving.command("127.0.0.1", port, str(BIN / "daphne")))

    def start_worker(self, index):
        command = [str(BIN / "celery"), "-A", "config", "worker", "-l", "info", "-n", f"w{index}@%h"]
        command += ["--pool", "prefork", "-c", str(self.concurrency), "--without-gossip", "--without-mingle"]
        self.celery[index] = self._spawn(f"worker-{index}", command)

    def _spawn(self, name, command):
        log = open(self.logs / f"{name}.log", "ab")
        return subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)

    def log(self, name):
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def pool_children(self, index):
        """The pids of a worker's pool processes."""
        pid = self.celery[index].pid
        try:
            return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except FileNotFoundError:
            return []

    @staticmethod
    def listening(port):
        import socket

        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    @staticmethod
    def wait(ready, what, bound_s=120):
        deadline = time.monotonic() + bound_s
        while not ready():
            if time.monotonic() > deadline:
                raise TimeoutError(f"gave up waiting for {what}")
            time.sleep(0.2)

    def stop(self):
        processes = [*self.servers.values(), *self.celery.values()]
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def main():
    database_url = os.environ.get("DATABASE_URL", "postgres://postgres:postgres@127.0.0.1:5432/reasoning")
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    port = int(os.environ.get("PORT", "8000"))
    env = {"REASONING_OFFLINE_LATENCY_MS": os.environ.get("REASONING_OFFLINE_LATENCY_MS", "150")}
    profile = Scaled(database_url, redis_url, ports=(port, port + 1), env=env, logs=ROOT / "var" / "scaled")
    profile.logs.mkdir(parents=True, exist_ok=True)
    profile.manage("migrate", "--noinput")
    profile.manage("seed_demo")
    profile.start()
    print(
        f"\n  Explorer: http://127.0.0.1:{port}/ and http://127.0.0.1:{port + 1}/   login: advisor / advisor (demo only)"
    )
    print(f"  Two Celery workers (two pool processes each) on {redis_url}; logs in {profile.logs}. Ctrl-C stops.\n")
    try:
        while all(p.poll() is None for p in [*profile.servers.values(), *profile.celery.values()]):
            time.sleep(1)
        print("a process of the profile exited; see its log in", profile.logs, file=sys.stderr)
    except KeyboardInterrupt:
        pass
    finally:
        profile.stop()


if __name__ == "__main__":
    main()
