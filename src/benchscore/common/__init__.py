"""What every room needs: errors, strict readers, atomic writes, provenance, output models, terminal and HTML
rendering, the OpenAI-compatible client and its test server, verify's mechanism.

Names are imported on first use (PEP 562), so importing one light piece (``benchscore.common.cli``,
``benchscore.common.errors``) does not load pydantic, numpy or rich. The provenance block is built by
``benchscore.common.provenance.provenance`` (not re-exported here: a package attribute named like its
submodule would turn into the module as soon as the submodule is imported).
"""

from __future__ import annotations

from .lazy import lazy_exports

_EXPORTS = {
    "atomic_directory": "atomic",
    "atomic_write_bytes": "atomic",
    "atomic_write_json": "atomic",
    "atomic_write_text": "atomic",
    "dumps_json": "atomic",
    "BadInput": "errors",
    "BenchscoreError": "errors",
    "ExitCode": "errors",
    "ServiceUnavailable": "errors",
    "Format": "models",
    "loads_json": "readers",
    "parse_finite_float": "readers",
    "read_bytes": "readers",
    "read_csv": "readers",
    "read_csv_table": "readers",
    "read_json_bytes": "readers",
    "read_json": "readers",
    "read_jsonl": "readers",
    "validate": "readers",
    "created_at": "provenance",
    "sha256_bytes": "provenance",
    "sha256_file": "provenance",
}

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
    "parse_finite_float",
    "read_bytes",
    "read_csv",
    "read_csv_table",
    "read_json_bytes",
    "read_json",
    "read_jsonl",
    "sha256_bytes",
    "sha256_file",
    "validate",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
