"""Defaults the CLI shows in ``--help`` without importing the runtime (the runtime uses the same names)."""

DEFAULT_STORE_URL = "sqlite:///run.db"
DEFAULT_LEASE_SECONDS = 30.0
#: the values of :class:`benchscore.swarm.lease.CrashPolicy`, in its order
CRASH_POLICIES = ("requeue", "fail")
