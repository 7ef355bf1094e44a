"""Defaults the CLI shows in ``--help`` without importing the runtime (the runtime uses the same names)."""

DEFAULT_STORE_URL = "sqlite:///run.db"
DEFAULT_LEASE_SECONDS = 30.0
#: the lease of L01's claims (swarm stress)
STRESS_LEASE_SECONDS = 60.0
#: the values of :class:`benchscore.swarm.lease.CrashPolicy`, in its order
CRASH_POLICIES = ("requeue", "fail")
#: how long a store (PostgreSQL, SQLite) may be unavailable mid-run before the run stops (seconds;
#: ``--max-outage``): every worker and the coordinator retry with backoff until then
DEFAULT_MAX_OUTAGE = 60.0
