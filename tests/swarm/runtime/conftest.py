"""Fixtures of the swarm runtime tests: a store URL per backend (SQLite always, PostgreSQL when up)."""

from __future__ import annotations

import uuid

import pytest

from benchscore.swarm import open_pool


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path}/run.db"


@pytest.fixture
def pg_url(pg_schema):
    dsn, schema = pg_schema
    sep = "&" if "?" in dsn else "?"
    return f"{dsn}{sep}schema={schema}"


@pytest.fixture(params=["sqlite", pytest.param("pg", marks=pytest.mark.pg)])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/run.db"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def new_pool(store_url):
    """Factory: a fresh run in the store under test; closed afterwards."""
    opened = []

    def make(*, crash_policy="requeue", lease_seconds=30.0, run_id=None):
        pool = open_pool(store_url, run_id or f"t-{uuid.uuid4().hex[:8]}")
        pool.create_run(crash_policy=crash_policy, lease_seconds=lease_seconds)
        opened.append(pool)
        return pool

    yield make
    for p in opened:
        p.close()


def _own(kind: str, what: str):
    """Start a server of the test's own (``OwnPostgres`` / ``OwnRedis``), or skip saying why (fail
    under BENCHSCORE_REQUIRE_SERVICES=1) when its binaries are missing."""
    from benchscore.common.services import services_required

    from . import own_services

    try:
        return getattr(own_services, kind)()
    except own_services.Unavailable as exc:
        reason = f"a {what} of the test's own cannot be started: {exc}"
        if services_required():
            pytest.fail(f"{reason} (BENCHSCORE_REQUIRE_SERVICES=1)")
        pytest.skip(reason)


@pytest.fixture(scope="session")
def _own_pg_server():
    server = _own("OwnPostgres", "PostgreSQL")
    yield server
    server.destroy()


@pytest.fixture
def own_pg(_own_pg_server):
    """A PostgreSQL of the test's own (:class:`~own_services.OwnPostgres`) that the test may restart or
    stop; running again at the start of every test. ``own_pg.fresh_url()`` is a store URL with a schema
    of its own."""
    _own_pg_server.ensure_running()
    yield _own_pg_server
    _own_pg_server.ensure_running()


@pytest.fixture
def own_redis():
    """A redis-server of the test's own, which the test may stop and start again."""
    server = _own("OwnRedis", "Redis")
    yield server
    server.destroy()
