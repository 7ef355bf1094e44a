"""A PostgreSQL and a Redis of the tests' own, which a test may restart or stop (the machine's
services on 5432 and 6379 are never touched).

- :class:`OwnPostgres`: ``initdb`` into a temporary folder, ``pg_ctl start`` on a free port of
  127.0.0.1 (no fsync: a test database), ``restart`` / ``stop`` / ``start`` at will, removed at
  the end. The server binaries are found in ``BENCHSCORE_PG_BINDIR``, the newest
  ``/usr/lib/postgresql/*/bin`` (Debian, Ubuntu), or on ``PATH``. PostgreSQL refuses to run as
  root: as root, the server runs as the ``postgres`` user.
- :class:`OwnRedis`: ``redis-server`` on a free port, no persistence; ``stop`` / ``start``.

Tests get them through the ``own_pg`` / ``own_redis`` fixtures (``conftest.py``), which skip
with the reason when the binaries are missing and fail instead under
``BENCHSCORE_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path


class Unavailable(Exception):
    """The binaries (or the user to run them as) are not on this machine."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bindir() -> Path:
    """Where initdb, pg_ctl and postgres are."""
    env = os.environ.get("BENCHSCORE_PG_BINDIR")
    if env:
        if not ((Path(env) / "initdb").exists() and (Path(env) / "pg_ctl").exists()):
            raise Unavailable(f"BENCHSCORE_PG_BINDIR={env}: no initdb and pg_ctl there")
        return Path(env)
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
                         if Path(p).parent.name.isdigit() else 0, reverse=True)
    which = shutil.which("initdb")
    if which:
        candidates.append(str(Path(which).parent))
    for c in candidates:
        if c and (Path(c) / "initdb").exists() and (Path(c) / "pg_ctl").exists():
            return Path(c)
    raise Unavailable("PostgreSQL server binaries (initdb, pg_ctl) not found: install postgresql, or set "
                      "BENCHSCORE_PG_BINDIR")


class OwnPostgres:
    """One PostgreSQL cluster in a temporary folder, on a free port, with a database ``test``."""

    def __init__(self, options: str = "") -> None:
        """``options``: more ``-c name=value`` server settings (e.g. a preloaded library)."""
        self.bindir = pg_bindir()
        self.extra_options = options
        self.user = None
        if os.geteuid() == 0:  # the server refuses root
            try:
                import pwd

                pwd.getpwnam("postgres")
            except KeyError:
                raise Unavailable("running as root and there is no 'postgres' user to run PostgreSQL as") from None
            self.user = "postgres"
        self.root = Path(tempfile.mkdtemp(prefix="benchscore-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        if self.user:
            shutil.chown(self.root, self.user, self.user)
        self.port = free_port()
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
        self.start()
        import psycopg

        with psycopg.connect(self.dsn("postgres"), autocommit=True) as c:
            c.execute("CREATE DATABASE test")

    def _run(self, tool: str, *args: str, timeout: float = 120) -> None:
        proc = subprocess.run([str(self.bindir / tool), *args], capture_output=True, text=True, timeout=timeout,
                              user=self.user, cwd=self.root)
        if proc.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{tool} {' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()} {log}")

    @property
    def _options(self) -> str:
        return (f"-c port={self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.root} "
                f"-c fsync=off -c full_page_writes=off -c max_connections=200 {self.extra_options}").strip()

    def dsn(self, db: str = "test") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def fresh_url(self) -> str:
        """A store URL with a schema of its own (created by the store at its first connection)."""
        return f"{self.dsn()}?schema=own_{uuid.uuid4().hex[:12]}"

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", self._options, "-w", "-t", "60",
                  "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def restart(self, mode: str = "fast") -> None:
        """``pg_ctl restart -m fast``: every connection is cut, the server is back moments later."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-m", mode, "-o", self._options, "-w", "-t", "60",
                  "restart")

    def is_running(self) -> bool:
        return subprocess.run([str(self.bindir / "pg_ctl"), "-D", str(self.data), "status"], capture_output=True,
                              user=self.user).returncode == 0

    def ensure_running(self) -> None:
        if not self.is_running():
            self.start()

    def destroy(self) -> None:
        try:
            if self.is_running():
                self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


class OwnRedis:
    """One redis-server on a free port, without persistence."""

    def __init__(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise Unavailable("redis-server not found: install redis")
        self.exe = exe
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen([self.exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=0.5).ping()
                return
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def destroy(self) -> None:
        self.stop()
