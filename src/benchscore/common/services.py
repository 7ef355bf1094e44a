"""Where the services are: PostgreSQL and Redis URLs, overridable by environment variables."""

from __future__ import annotations

import os

DEFAULT_PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def pg_dsn() -> str:
    return os.environ.get("BENCHSCORE_PG_DSN", DEFAULT_PG_DSN)


def redis_url() -> str:
    return os.environ.get("BENCHSCORE_REDIS_URL", DEFAULT_REDIS_URL)


def services_required() -> bool:
    """True when tests must fail, not skip, if a service is unreachable (CI sets it)."""
    return os.environ.get("BENCHSCORE_REQUIRE_SERVICES", "") not in ("", "0", "false", "no")
