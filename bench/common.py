"""What the benchmarks share: a Django setup on a throwaway SQLite database, a timed gateway, the report file."""

import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "docs" / "BENCHMARKS.md"
# The tree whose code is measured: this one, or another commit's unpacked beside it (a bench's --against).
CODE = Path(os.environ.get("BENCH_CODE_ROOT") or ROOT)


def free_port():
    """A loopback port nothing listens on now, for a server a bench starts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setup_django():
    sys.path.insert(0, str(CODE))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='bench-')}/bench.sqlite3"
    import django

    django.setup()
    import reasoning

    # Celery puts the working directory first on sys.path as config/ loads: run from another tree, this process would
    # measure that tree's code under this one's name. bench/tot_critical_path.py runs each tree from its own directory.
    if not Path(reasoning.__file__).resolve().is_relative_to(CODE.resolve()):
        raise SystemExit(f"measuring {reasoning.__file__}, not the code of {CODE}: run from {CODE}")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def timed_gateway_class():
    """The real gateway, recording when model calls are in flight (to split engine time from model time)."""
    from reasoning.llm.gateway import ModelGateway

    class TimedRouter:
        """The gateway's router, timing each call; one per gateway (sessions share the Router itself, which must not
        be wrapped again by every gateway made)."""

        def __init__(self, router, intervals):
            self.router, self.intervals = router, intervals

        async def acompletion(self, **kwargs):
            started = time.perf_counter()
            try:
                return await self.router.acompletion(**kwargs)
            finally:
                self.intervals.append((started, time.perf_counter()))

    class TimedGateway(ModelGateway):
        def __init__(self, session):
            super().__init__(session)
            self.intervals = []
            self.router = TimedRouter(self.router, self.intervals)

        def model_time(self):
            """Seconds with at least one model call in flight (the union of the call intervals)."""
            total, end = 0.0, None
            for start, stop in sorted(self.intervals):
                if end is None or start > end:
                    total, end = total + (stop - start), stop
                elif stop > end:
                    total, end = total + (stop - end), stop
            return total

    return TimedGateway


def machine():
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, SQLite"


def commit():
    return (
        subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        or "uncommitted"
    )


def unpack(ref):
    """Another commit's tree in a temporary directory (git archive: the repository is left as it is)."""
    target = Path(tempfile.mkdtemp(prefix="bench-code-"))
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def write_section(name, text, report=REPORT):
    """Replace one benchmark's section of the report (between its markers), keeping the others."""
    begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{begin}\n{text.strip()}\n{end}"
    current = (
        report.read_text()
        if report.exists()
        else "# Benchmarks\n\nMeasured figures only; each section says the command that made it.\n"
    )
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    updated = (
        pattern.sub(lambda _: block, current) if pattern.search(current) else current.rstrip() + "\n\n" + block + "\n"
    )
    report.write_text(updated)
