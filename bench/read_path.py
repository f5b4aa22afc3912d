"""Benchmark: 200 concurrent readers of a live session's tree, against a real Daphne, on SQLite and PostgreSQL.

A fresh database (a throwaway SQLite file; on PostgreSQL the database named by --postgres, emptied first), served
by one Daphne process and then by two on one port (--processes), with the in-process runner; one Tree of Thoughts session running on the offline model while the
readers read. Each reader is one keep-alive HTTP/1.1 connection that asks for `GET /api/sessions/{id}/tree` over
and over with its API key, sending back the last ETag it got (If-None-Match), as a polling client does. Measured:
the latency of every request (p50, p95, max), requests a second, and errors (anything but 200 and 304, or a broken
connection). PostgreSQL is skipped when the server is not reachable.

Run: make bench   (or: .venv/bin/python bench/read_path.py [--readers 200] [--seconds 10] [--processes 1,2]
[--memo-s 0,1] [--tree live|resting] [--postgres URL]); each --memo-s value is a row, run back to back.
"""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from urllib.parse import urlsplit

from common import ROOT, commit, free_port, machine, write_section

PYTHON = sys.executable
DEFAULT_POSTGRES = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres:postgres@127.0.0.1:5432/reasoning_bench")
PROBLEM = "Build an investment thesis for adding CHF 2.4m of European healthcare equities to a CHF 18m portfolio."


def postgres_reachable(url):
    try:
        import psycopg

        parts = urlsplit(url)
        with psycopg.connect(url.replace(parts.path, "/postgres"), connect_timeout=3, autocommit=True) as conn:
            name = parts.path.lstrip("/")
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return True
    except Exception as error:  # not installed, not running, no password: the PostgreSQL half is skipped
        print(f"PostgreSQL not reachable at {url}: {error}", file=sys.stderr)
        return False


def server_env(database_url, latency_ms, memo_s):
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "TASK_RUNNER"}}
    env.update(
        REASONING_READ_MEMO_S=str(memo_s),
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="config.settings",
        REASONING_OFFLINE_LATENCY_MS=str(latency_ms),
        REASONING_CREATE_RATE="off",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    return env


def manage(env, *args):
    out = subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return out.stdout


async def request(reader, writer, path, headers):
    """One GET on a keep-alive connection: (status, headers dict, body bytes)."""
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    writer.write("\r\n".join(lines).encode())
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    got = {}
    for line in header_lines:
        if ":" in line:
            name, value = line.split(":", 1)
            got[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(got.get("content-length", 0)))
    return int(status_line.split()[1]), got, body


async def read_for(port, path, key, seconds, readers):
    latencies, statuses, errors, nodes_seen = [], {}, [], [0]
    deadline = time.perf_counter() + seconds

    async def one_reader():
        etag = None
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError as error:
            errors.append(repr(error))
            return
        try:
            while time.perf_counter() < deadline:
                headers = {"Authorization": f"Bearer {key}"}
                if etag:
                    headers["If-None-Match"] = etag
                started = time.perf_counter()
                status, got, body = await asyncio.wait_for(request(reader, writer, path, headers), 60)
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1
                if status == 200:
                    etag = got.get("etag")
                    nodes_seen[0] = max(nodes_seen[0], len(json.loads(body)["nodes"]))
                elif status != 304:
                    errors.append(f"{status}: {body[:200]!r}")
                if got.get("connection", "").lower() == "close":
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as error:
            errors.append(repr(error))
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(one_reader() for _ in range(readers)))
    elapsed = time.perf_counter() - started
    return latencies, statuses, errors, elapsed, nodes_seen[0]


def start_daphne(env, port, processes=1):
    """Daphne processes serving one port, each on its own listening socket bound with SO_REUSEPORT: the kernel spreads
    new connections over them evenly, as a balancer in front of several servers does. (Processes accepting from one
    shared socket take connections as they happen to wake, and keep-alive readers stay where they landed.)"""
    listeners = []
    for _ in range(processes):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(1024)
        listeners.append(listener)
    servers = [
        subprocess.Popen(
            [PYTHON, "-m", "daphne", "--fd", str(listener.fileno()), "config.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=[listener.fileno()],
        )
        for listener in listeners
    ]
    for listener in listeners:
        listener.close()
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as probe:
                probe.sendall(b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                if probe.recv(12).startswith(b"HTTP/1.1"):
                    return servers
        except OSError:
            pass
        for server in servers:
            if server.poll() is not None:
                raise RuntimeError(f"daphne exited: {server.stderr.read().decode()[-2000:]}")
        time.sleep(0.2)
    for server in servers:
        server.kill()
    raise RuntimeError("daphne did not start")


def post_json(port, path, key, payload):
    import urllib.request

    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(payload).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as response:
        return json.loads(response.read())


def get_json(port, path, key):
    import urllib.request

    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(req, timeout=30) as response:
        return json.loads(response.read())


def wait_until_rest(port, session_id, key):
    for _ in range(600):
        if get_json(port, f"/api/sessions/{session_id}", key)["status"] not in {"queued", "running"}:
            return
        time.sleep(0.5)
    raise RuntimeError("the session did not come to rest")


def measure(database_url, readers, seconds, latency_ms, processes=1, memo_s=1.0, tree="live"):
    env = server_env(database_url, latency_ms if tree == "live" else 0, memo_s)
    manage(env, "migrate", "--noinput")
    key = manage(env, "create_api_key", "bench-readers").strip().splitlines()[-1]
    port = free_port()
    servers = start_daphne(env, port, processes)
    try:
        session = post_json(port, "/api/sessions", key, {"problem_text": PROBLEM, "mode": "tot"})
        if tree == "resting":  # what most polling meets: a tree that no longer changes
            wait_until_rest(port, session["id"], key)
        path = f"/api/sessions/{session['id']}/tree"
        load = os.getloadavg()[0]
        latencies, statuses, errors, elapsed, nodes = asyncio.run(read_for(port, path, key, seconds, readers))
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
    latencies.sort()
    return {
        "requests": len(latencies),
        "rate": len(latencies) / elapsed,
        "p50": statistics.median(latencies) * 1000 if latencies else float("nan"),
        "p95": latencies[int(0.95 * (len(latencies) - 1))] * 1000 if latencies else float("nan"),
        "max": latencies[-1] * 1000 if latencies else float("nan"),
        "statuses": statuses,
        "errors": errors,
        "nodes": nodes,
        "load": load,
    }


def row(name, processes, memo_s, r, goal):
    statuses = ", ".join(f"{n} x {s}" for s, n in sorted(r["statuses"].items()))
    memo = f"{memo_s:g} s" if memo_s > 0 else "off"
    return (
        f"| {name} | {processes} | {memo} | {r['requests']:,} ({statuses}) | {len(r['errors'])} | {r['rate']:.0f} | {r['p50']:.0f} ms | "
        f"{r['p95']:.0f} ms | {r['max']:.0f} ms | {r['nodes']} | {r['load']:.1f} | {goal} |"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--latency-ms", type=int, default=1000, help="per model call, so the session runs throughout")
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES)
    parser.add_argument(
        "--processes", default="1,2", help="Daphne processes on the port, one row per count (comma-separated)"
    )
    parser.add_argument(
        "--memo-s", default="0,1", help="REASONING_READ_MEMO_S, one row per value: 0 is every 304 from the database"
    )
    parser.add_argument(
        "--tree", choices=["live", "resting"], default="live", help="read a running session, or one come to rest"
    )
    args = parser.parse_args()
    counts = [int(n) for n in args.processes.split(",")]
    memos = [float(n) for n in args.memo_s.split(",")]
    databases = {"SQLite": lambda: f"sqlite:///{tempfile.mkdtemp(prefix='bench-read-')}/read.sqlite3"}
    if postgres_reachable(args.postgres):
        databases["PostgreSQL"] = lambda: args.postgres if postgres_reachable(args.postgres) else None
    results = {}
    for name, fresh in databases.items():
        for count in counts:
            for memo_s in memos:  # before and after, back to back, under the same load
                r = measure(fresh(), args.readers, args.seconds, args.latency_ms, count, memo_s, args.tree)
                results[(name, count, memo_s)] = r
    for (name, count, memo_s), r in results.items():
        for error in r["errors"][:5]:
            print(f"{name} x {count} (memo {memo_s:g}): {error}", file=sys.stderr)

    def verdict(r):
        met = r["p95"] < 1000 and r["rate"] >= 300 and not r["errors"]
        return "p95 < 1 s at >= 300 req/s, 0 errors: " + ("met" if met else "missed")

    rows = "\n".join(
        row(name, count, memo_s, r, verdict(r) if name == "PostgreSQL" else "0 errors")
        for (name, count, memo_s), r in results.items()
    )
    running = (
        f"A Tree of Thoughts session runs on the offline model at {args.latency_ms} ms per call throughout"
        if args.tree == "live"
        else "A Tree of Thoughts session ran to its end on the offline model before the readers started"
    )
    what = "a live session's tree" if args.tree == "live" else "a session's tree come to rest"
    flags = f"--readers {args.readers} --seconds {args.seconds:g} --processes {args.processes} --memo-s {args.memo_s}"
    report = f"""## The read path: {args.readers} concurrent readers of {what}

Command: `make bench` (`.venv/bin/python bench/read_path.py {flags} --tree {args.tree}`), {date.today()}, commit {commit()}.
Machine: {machine().replace(", SQLite", "")}; PostgreSQL {"and SQLite" if "PostgreSQL" in databases else "not reachable: SQLite only"}.
Daphne serving a fresh database, with the in-process runner: one process, or two on one port (each its own
listening socket with SO_REUSEPORT, so the kernel spreads the connections as a balancer in front of the scaled
profile's two servers would).
{running}.
Memo: REASONING_READ_MEMO_S (off: every 304 asks the database on a request thread; on: an unchanged tree's 304
from memory, on the event loop). Each reader is one keep-alive connection asking for `GET /api/sessions/{{id}}/tree`
in a loop with its API key and the last ETag it got (If-None-Match), for {args.seconds:g} s; the readers run in the bench's process on
the same machine. Load: the 1-minute load average when the readers started (2 cores, shared).

| database | Daphne processes | memo | requests (by status) | errors | req/s | p50 | p95 | max | nodes at the end | load | goal |
|---|---|---|---|---|---|---|---|---|---|---|---|
{rows}
"""
    write_section("read_path" if args.tree == "live" else "read_path_resting", report)
    print(report)


if __name__ == "__main__":
    main()
