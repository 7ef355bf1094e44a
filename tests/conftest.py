"""Shared fixtures: service access (PostgreSQL, Redis) per DESIGN.md, hypothesis profile, SOURCE_DATE_EPOCH."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from benchscore.common.services import pg_dsn, redis_url, services_required

settings.register_profile(
    "benchscore", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow]
)
#: BENCHSCORE_HYPOTHESIS=thorough: 20x the examples, for a hunt before a release (CI runs the default profile)
settings.register_profile(
    "thorough", deadline=None, max_examples=2000, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("BENCHSCORE_HYPOTHESIS", "benchscore"))


def _missing(reason: str, switch: str) -> None:
    """An optional part is missing: fail when ``switch`` (e.g. ``BENCHSCORE_REQUIRE_INSPECT``) is 1 (CI sets
    it, so a broken install cannot pass silently), skip with the reason otherwise."""
    if os.environ.get(switch) == "1":
        pytest.fail(f"{reason} ({switch}=1)")
    pytest.skip(reason)


def _import_error(module: str) -> str | None:
    """None when ``module`` imports, else why it does not (cached: each optional part is tried once)."""
    if module not in _IMPORT_ERRORS:
        try:
            found = __import__(module)
            # a folder of that name on sys.path (tests/results/lm_eval, with the tests' own lm_eval runner)
            # imports as an empty namespace package: that is not the package
            _IMPORT_ERRORS[module] = (None if getattr(found, "__file__", None) else
                                      f"No module named {module!r} (only a folder of that name: "
                                      f"{', '.join(getattr(found, '__path__', []))})")
        except ImportError as exc:
            _IMPORT_ERRORS[module] = f"{exc}"
    return _IMPORT_ERRORS[module]


_IMPORT_ERRORS: dict[str, str | None] = {}

#: The optional parts, by the fixture that stands for them: a test whose fixtures include one of these
#: (directly, through another fixture or ``usefixtures``, at any scope) skips or fails by the part's
#: switch in ``pytest_runtest_setup``, before any of its fixtures runs: a module-scoped fixture that runs
#: lm_eval never starts when lm_eval is missing. Each entry: why it is missing (None when it is there),
#: the switch that makes a missing part a failure.
OPTIONAL_PARTS = {
    "inspect_ai_installed": (
        lambda: (f"inspect_ai is not importable ({e}); install the extra: pip install -e '.[inspect]'"
                 if (e := _import_error("inspect_ai")) else None),
        "BENCHSCORE_REQUIRE_INSPECT"),
    "lm_eval_installed": (
        lambda: (f"lm-evaluation-harness is not importable ({e}); install the extra: pip install -e '.[lmeval]'"
                 if (e := _import_error("lm_eval")) else None),
        "BENCHSCORE_REQUIRE_LMEVAL"),
    "dask_installed": (
        lambda: (f"dask distributed is not importable ({e}); install the extra: pip install -e '.[dask]'"
                 if (e := _import_error("distributed")) else None),
        "BENCHSCORE_REQUIRE_DASK"),
    "browser": (
        lambda: None if CHROMIUM.exists() else f"{CHROMIUM} is not installed (apt-get install chromium)",
        "BENCHSCORE_REQUIRE_BROWSER"),
}


#: the marker each optional part's tests carry, whether they ask for its fixture directly or not
#: (``.ci/run``'s second pass selects them with ``-m "lmeval or dask"`` once the extras are installed)
MARKERS = {"inspect_ai_installed": "inspect", "lm_eval_installed": "lmeval", "dask_installed": "dask"}


def pytest_collection_modifyitems(items):
    for item in items:
        for name, marker in MARKERS.items():
            if name in getattr(item, "fixturenames", ()) and not item.get_closest_marker(marker):
                item.add_marker(marker)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    for name, (missing, switch) in OPTIONAL_PARTS.items():
        if name in getattr(item, "fixturenames", ()) and (reason := missing()):
            _missing(reason, switch)


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


LIVE_DEFAULT_URL = "http://127.0.0.1:8090/v1"


@pytest.fixture(scope="session")
def live_gateway():
    """The real local model server of ``scripts/live-gateway.sh``: yields ``(base_url, model)``.

    Live tests are marked ``live`` and run only with ``BENCHSCORE_LIVE=1`` (building the server takes
    about half an hour, so the default run skips them with that reason). With the switch on, an
    unreachable gateway fails the test instead of skipping it. ``BENCHSCORE_LIVE_URL`` overrides the
    URL; ``BENCHSCORE_LIVE_MODEL`` picks a model (default: the first one ``GET /v1/models`` lists).
    """
    if os.environ.get("BENCHSCORE_LIVE") != "1":
        pytest.skip("live model test: set BENCHSCORE_LIVE=1 after `scripts/live-gateway.sh start` (see README)")
    from benchscore.common.llm import LLMClient, LLMError

    url = os.environ.get("BENCHSCORE_LIVE_URL", LIVE_DEFAULT_URL)
    try:
        with LLMClient(url, max_retries=1) as client:
            models = client.list_models()
    except (LLMError, ValueError) as exc:
        pytest.fail(f"BENCHSCORE_LIVE=1 but the gateway at {url} does not answer: {exc} "
                    "(start it with scripts/live-gateway.sh start)")
    if not models:
        pytest.fail(f"the gateway at {url} lists no model")
    model = os.environ.get("BENCHSCORE_LIVE_MODEL", models[0])
    if model not in models:
        pytest.fail(f"BENCHSCORE_LIVE_MODEL={model!r} is not listed by {url}: {models}")
    return url, model


@pytest.fixture(scope="session")
def inspect_ai_installed():
    """inspect_ai, the optional ``inspect`` extra (the ``test`` extra includes it).

    Tests that run real inspect_ai evaluations or read their logs use this fixture: they skip with
    the reason when inspect_ai is not importable, and fail instead when
    ``BENCHSCORE_REQUIRE_INSPECT=1`` (CI sets it), so a broken install cannot pass silently.
    """
    try:
        import inspect_ai
    except ImportError as exc:
        _missing(f"inspect_ai is not importable ({exc}); install the extra: pip install -e '.[inspect]'",
                 "BENCHSCORE_REQUIRE_INSPECT")
    return inspect_ai


@pytest.fixture(scope="session")
def lm_eval_installed():
    """lm-evaluation-harness, the optional ``lmeval`` extra (CI installs it).

    Tests that run ``lm_eval`` for real use this fixture: they skip with the reason when it is not
    importable, and fail instead when ``BENCHSCORE_REQUIRE_LMEVAL=1`` (CI sets it), as the inspect_ai
    tests do.
    """
    try:
        import lm_eval
    except ImportError as exc:
        _missing(f"lm-evaluation-harness is not importable ({exc}); install the extra: pip install -e '.[lmeval]'",
                 "BENCHSCORE_REQUIRE_LMEVAL")
    return lm_eval


@pytest.fixture(scope="session")
def dask_installed():
    """Dask distributed, the optional ``dask`` extra (``--scheduler``).

    Tests that start a Dask cluster depend on this fixture first, so that the skip (with the reason, when
    ``distributed`` is not importable) or the failure (``BENCHSCORE_REQUIRE_DASK=1``, as CI sets it) happens
    before any fixture that needs Dask runs, whatever its scope.
    """
    try:
        import distributed
    except ImportError as exc:
        _missing(f"dask distributed is not importable ({exc}); install the extra: pip install -e '.[dask]'",
                 "BENCHSCORE_REQUIRE_DASK")
    return distributed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3_server(tmp_path):
    """A real S3-compatible server (moto's), started on a free port for the test and stopped after; yields its URL
    and the environment s3fs needs to reach it (set them with monkeypatch, then reload fsspec's config)."""
    import moto  # noqa: F401 - moto[server] is in the test extra: a missing one fails, never skips
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        env = {"FSSPEC_S3_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1"}
        yield url, env
    finally:
        proc.terminate()
        proc.wait(timeout=30)


CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium driven by playwright (never `playwright install`); skipped when it is
    missing, unless BENCHSCORE_REQUIRE_BROWSER=1 (CI), which makes a missing browser a failure. One for the
    whole session: playwright's sync API refuses a second instance while the first one runs."""
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is not installed (apt-get install chromium)", "BENCHSCORE_REQUIRE_BROWSER")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
