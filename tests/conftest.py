"""Shared fixtures: service access (PostgreSQL, Redis) per DESIGN.md, hypothesis profile, SOURCE_DATE_EPOCH."""

from __future__ import annotations

import os
import uuid

import pytest
from hypothesis import HealthCheck, settings

from benchscore.common.services import pg_dsn, redis_url, services_required

settings.register_profile(
    "benchscore", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("benchscore")


def _unavailable(what: str, exc: BaseException) -> None:
    reason = f"{what} unreachable: {type(exc).__name__}: {exc}"
    if services_required():
        pytest.fail(f"{reason} (BENCHSCORE_REQUIRE_SERVICES=1)")
    pytest.skip(reason)


@pytest.fixture
def pg_schema():
    """A fresh PostgreSQL schema; yields ``(dsn, schema)`` and drops the schema afterwards."""
    import psycopg

    dsn = pg_dsn()
    try:
        conn = psycopg.connect(dsn, connect_timeout=3, autocommit=True)
    except Exception as exc:  # noqa: BLE001 - any failure to connect means 'unavailable'
        _unavailable(f"PostgreSQL at {dsn}", exc)
    schema = f"bs_test_{uuid.uuid4().hex[:12]}"
    with conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield dsn, schema
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def redis_prefix():
    """A Redis URL and a unique key prefix; yields ``(url, prefix)`` and deletes the prefix's keys."""
    import redis

    url = redis_url()
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=3)
        client.ping()
    except Exception as exc:  # noqa: BLE001
        _unavailable(f"Redis at {url}", exc)
    prefix = f"bs_test_{uuid.uuid4().hex[:12]}:"
    try:
        yield url, prefix
    finally:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


@pytest.fixture
def pinned_time(monkeypatch):
    """Pin provenance.created_at so outputs are byte-identical."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01T00:00:00Z
    return os.environ["SOURCE_DATE_EPOCH"]
