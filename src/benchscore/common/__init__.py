"""What every domain shares: errors, strict readers, atomic writes, stats, provenance, rendering."""

from .atomic import atomic_directory, atomic_write_bytes, atomic_write_json, atomic_write_text, dumps_json
from .errors import BadInput, BenchscoreError, ExitCode, ServiceUnavailable
from .models import Format
from .provenance import created_at, provenance, sha256_bytes, sha256_file
from .readers import (
    loads_json,
    parse_finite_float,
    read_bytes,
    read_csv,
    read_json,
    read_jsonl,
    validate,
)
from .stats import mean, phi, sample_std

__all__ = [
    "BadInput",
    "BenchscoreError",
    "ExitCode",
    "Format",
    "ServiceUnavailable",
    "atomic_directory",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "created_at",
    "dumps_json",
    "loads_json",
    "mean",
    "parse_finite_float",
    "phi",
    "provenance",
    "read_bytes",
    "read_csv",
    "read_json",
    "read_jsonl",
    "sample_std",
    "sha256_bytes",
    "sha256_file",
    "validate",
]
