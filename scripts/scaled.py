"""The scale-out profile on one machine: two Daphne servers and two Celery workers on PostgreSQL + Redis.

`make run-scaled` runs this: it migrates the database named by DATABASE_URL (as that URL's user: the tables' owner,
or a superuser), seeds the demo tenant, gives the app's two roles their logins (`manage.py db_logins`), then serves
on ports 8000 and 8001 (PORT, PORT + 1) with TASK_RUNNER=celery, each worker a prefork pool of two children, until
Ctrl-C. The servers and workers log in as reasoning_app, not as DATABASE_URL's user, and their all-tenants door as
reasoning_all (passwords REASONING_APP_DB_PASSWORD and REASONING_ALL_TENANTS_DB_PASSWORD, else the demo's). The
chaos test (tests/chaos) drives the same class with its own Redis and database.

The processes run under supervisord (the `supervisor` package, as production often runs them): this script writes its
configuration (var/scaled/supervisord.conf) and starts it. A process that dies is started again (at once after it
had run, with a growing wait while it fails to start, up to STARTRETRIES tries), the others keep serving, and a
restarted worker resumes the runs its dead self left (reasoning/tasks.py); every other worker and server sweeps
for them meanwhile.
"""

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import xmlrpc.client
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
from config import serving  # noqa: E402
from reasoning import rls  # noqa: E402


STARTRETRIES = 10  # supervisord waits 1 s more before each try: a process failing to start is retried for 55 s
STARTSECS = 1  # a process that ran this long started well: its next death is restarted at once


class Program:
    """One supervised process, by its supervisord name: its current pid changes when supervisord restarts it."""

    def __init__(self, scaled, name):
        self.scaled, self.name = scaled, name

    def info(self):
        info = self.scaled.rpc().supervisor.getProcessInfo(self.name)
        self.scaled.seen(info["pid"])
        return info

    @property
    def pid(self):
        return self.info()["pid"]

    def poll(self):
        """None while it runs (or is being started again), else its last exit status, as Popen.poll()."""
        info = self.info()
        return None if info["statename"] in ("RUNNING", "STARTING", "BACKOFF") else info["exitstatus"]

    def send_signal(self, signum):
        pid = self.pid
        if pid:
            os.kill(pid, signum)


class Scaled:
    """Two (or more) Daphne servers and Celery workers as separate processes under supervisord, their output in
    log files."""

    def __init__(self, database_url, redis_url, ports=(8000, 8001), workers=2, concurrency=2, env=None, logs=None):
        self.ports, self.workers, self.concurrency = list(ports), workers, concurrency
        self.logs = Path(logs or tempfile.mkdtemp(prefix="reasoning-scaled-"))
        # database_url is the tables' owner's (or a superuser's): migrate and the commands run as it.
        self.owner_env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "TASK_RUNNER": "celery",
            **(env or {}),
        }
        self.owner_env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.owner_env.pop("DATABASE_ALL_TENANTS_URL", None)
        # The servers and workers log in as reasoning_app, bound by row-level security, and their all-tenants door
        # as reasoning_all (reasoning/rls.py): neither owns a table, and no statement of theirs can become the other.
        self.env = {**self.owner_env, **rls.logins(database_url, self.owner_env)}
        self.servers, self.celery = {}, {}
        self.commands = {}  # supervisord program name -> argv
        self.supervisord = None
        self.groups = set()  # every program's process group seen: a killed worker's pool children outlive it there

    def manage(self, *args):
        subprocess.run([str(BIN / "python"), "manage.py", *args], cwd=ROOT, env=self.owner_env, check=True)

    def start(self):
        self.manage("db_logins")  # the logins the programs use, with this environment's passwords
        for port in self.ports:
            self.start_server(port)
        for index in range(self.workers):
            self.start_worker(index)
        self.start_supervisor()
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
        """A program for supervisord (start_supervisor starts them all)."""
        self.commands[name] = command
        return Program(self, name)

    @property
    def socket_path(self):
        return self.logs / "supervisor.sock"

    def config(self):
        """supervisord's configuration: every program restarted when it dies, its output in logs/<name>.log."""
        quote = lambda text: str(text).replace("%", "%%")  # noqa: E731  supervisord expands %(name)s in values
        lines = [
            "[supervisord]",
            "nodaemon=true",
            f"logfile={quote(self.logs / 'supervisord.log')}",
            f"pidfile={quote(self.logs / 'supervisord.pid')}",
            f"directory={quote(ROOT)}",
            "[unix_http_server]",
            f"file={quote(self.socket_path)}",
            "chmod=0700",
            "[rpcinterface:supervisor]",
            "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
            "[supervisorctl]",
            f"serverurl=unix://{quote(self.socket_path)}",
        ]
        for name, command in self.commands.items():
            lines += [
                f"[program:{name}]",
                f"command={quote(shlex.join(command))}",
                f"directory={quote(ROOT)}",
                "autostart=true",
                "autorestart=true",  # a process that dies, whatever its exit, is started again
                f"startsecs={STARTSECS}",
                f"startretries={STARTRETRIES}",
                "stopsignal=TERM",
                "stopwaitsecs=20",
                "stopasgroup=true",  # a worker's pool children stop with it
                "killasgroup=true",
                "redirect_stderr=true",
                f"stdout_logfile={quote(self.logs / (name + '.log'))}",
                "stdout_logfile_maxbytes=0",
            ]
        return "\n".join(lines) + "\n"

    def start_supervisor(self):
        path = self.logs / "supervisord.conf"
        path.write_text(self.config())
        log = open(self.logs / "supervisord.out", "ab")
        command = [str(BIN / "supervisord"), "-c", str(path)]
        # The programs inherit supervisord's environment: the profile's variables.
        self.supervisord = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.wait(self._answers, "supervisord to answer", 30)

    def rpc(self):
        from supervisor.xmlrpc import SupervisorTransport

        transport = SupervisorTransport(None, None, f"unix://{self.socket_path}")
        return xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport)

    def _answers(self):
        if self.supervisord.poll() is not None:
            raise RuntimeError(f"supervisord exited; see {self.logs / 'supervisord.log'}")
        try:
            return self.rpc().supervisor.getState()["statename"] == "RUNNING"
        except (OSError, xmlrpc.client.Fault):
            return False

    def seen(self, pid):
        if pid:
            try:
                self.groups.add(os.getpgid(pid))
            except ProcessLookupError:
                pass

    def states(self):
        """Each program's supervisord state (RUNNING, STARTING, BACKOFF, EXITED, FATAL...)."""
        return {info["name"]: info["statename"] for info in self.rpc().supervisor.getAllProcessInfo()}

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
        """supervisord stops every program (SIGTERM to its process group, SIGKILL after 20 s), then itself."""
        if self.supervisord is None or self.supervisord.poll() is not None:
            return
        try:
            for info in self.rpc().supervisor.getAllProcessInfo():
                self.seen(info["pid"])
        except (OSError, xmlrpc.client.Fault):
            pass
        self.supervisord.send_signal(signal.SIGTERM)
        try:
            self.supervisord.wait(timeout=90)
        except subprocess.TimeoutExpired:
            self.supervisord.kill()
            self.supervisord.wait()
        # What outlived supervisord (a killed worker's orphaned pool children, a program it had no time to stop).
        for group in self.groups - {os.getpgid(0)}:
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


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
    print(f"  Two Celery workers (two pool processes each) on {redis_url}; logs in {profile.logs}.")
    print(f"  Under supervisord: a process that dies is started again. Status: {BIN / 'supervisorctl'} -c "
          f"{profile.logs / 'supervisord.conf'} status. Ctrl-C stops.\n")
    try:
        while profile.supervisord.poll() is None:
            time.sleep(1)
        print("supervisord exited; see", profile.logs / "supervisord.log", file=sys.stderr)
    except KeyboardInterrupt:
        pass
    finally:
        profile.stop()


if __name__ == "__main__":
    main()
