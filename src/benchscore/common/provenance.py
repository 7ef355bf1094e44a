"""The ``provenance`` block every output JSON carries (DESIGN.md, Conventions)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchscore import __version__


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def created_at() -> str:
    """UTC timestamp, ISO 8601 with a Z; ``SOURCE_DATE_EPOCH`` pins it for reproducible output."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip():
        moment = datetime.fromtimestamp(int(epoch), tz=UTC)
    else:
        moment = datetime.now(tz=UTC).replace(microsecond=0)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def provenance(
    metric_id: str,
    inputs: Mapping[str, str | Path | bytes],
    *,
    reference: Mapping[str, Any] | None = None,
    seed: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the provenance block.

    ``inputs`` maps a role (``records``, ``attempts``, ...) to a file path (hashed from disk)
    or to bytes already read (hashed directly, so the file is not read twice). Only the file's
    name is recorded, never its absolute path, so output does not depend on the working folder.
    """
    files: dict[str, dict[str, str]] = {}
    for role, value in inputs.items():
        if isinstance(value, bytes):
            files[role] = {"sha256": sha256_bytes(value)}
        else:
            p = Path(value)
            files[role] = {"name": p.name, "sha256": sha256_file(p)}
    block: dict[str, Any] = {
        "benchscore_version": __version__,
        "metric_id": metric_id,
        "inputs": files,
    }
    if reference is not None:
        block["reference"] = dict(reference)
    if seed is not None:
        block["seed"] = seed
    if extra:
        block.update(extra)
    block["created_at"] = created_at()
    return block
