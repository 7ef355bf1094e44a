"""``benchscore swarm accept S07|S08|S09|S10|L01|L02|all`` and the acceptance part of the demo.

The runtime's CLI mounts :data:`accept` on the ``swarm`` group; the demo calls
:func:`demo_acceptance`. This module only wires :mod:`benchscore.swarm.accept`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from benchscore.common.atomic import atomic_write_bytes, dumps_json
from benchscore.common.cli import Command
from benchscore.common.errors import BadInput, ExitCode
from benchscore.common.provenance import provenance
from benchscore.common.report import console, note, table

from .accept.evidence import ScenarioResult
from .accept.matrix import AcceptanceMatrix, junit_check, render_markdown
from .accept.runner import SCENARIOS, AcceptOptions, AcceptOutcome, run_acceptance
from .accept.s07 import BUNDLE
from .consensus import ConsensusResult
from .fusion import Candidate, FusedOutput
from .gateway import DEFAULT_API_KEY_ENV, ModelIOReport, render_model_io_markdown
from .quality import QualityAssessment

#: the acceptance layer's formats, for ``benchscore schema`` (the swarm CLI merges them into FORMATS)
ACCEPT_FORMATS: dict[str, type] = {
    "swarm-acceptance-matrix": AcceptanceMatrix,
    "swarm-scenario-result": ScenarioResult,
    "swarm-model-io-report": ModelIOReport,
    "swarm-quality-assessment": QualityAssessment,
    "swarm-fusion-candidate": Candidate,
    "swarm-fused-output": FusedOutput,
    "swarm-consensus-result": ConsensusResult,
}


def _redact(url: str | None) -> str | None:
    if url is None:
        return None
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")))
    return url


def _provenance(which: str, opts: AcceptOptions) -> dict[str, Any]:
    inputs: dict[str, Any] = {"fastapi_manifest": BUNDLE / "manifest.json"}
    if opts.junit is not None:
        inputs["junit"] = opts.junit
    if opts.sdist is not None:
        inputs["sdist"] = opts.sdist
    return provenance(f"swarm.acceptance.{which}", inputs, extra={
        "store": _redact(opts.store) or "temporary SQLite file", "redis": _redact(opts.redis_url),
        "gateway": "live: " + (_redact(opts.base_url) or "") if opts.base_url else "replay: local test server",
        "run_id_prefix": opts.prefix})


def _write_outputs(which: str, outcome: AcceptOutcome, opts: AcceptOptions, output: Path) -> None:
    """Render every output first, then write them (atomically each): nothing partial on error."""
    prov = _provenance(which, opts)
    files: list[tuple[Path, bytes]] = []
    if outcome.model_io is not None:
        io_json = output.with_name(output.stem + ".model-io.json")
        files.append((io_json, dumps_json({**outcome.model_io.model_dump(), "provenance": prov})))
        files.append((io_json.with_suffix(".md"), render_model_io_markdown(outcome.model_io).encode()))
    if outcome.matrix is not None:
        files.append((output, dumps_json(outcome.matrix.model_copy(update={"provenance": prov}).model_dump())))
        files.append((output.with_suffix(".md"), render_markdown(outcome.matrix).encode()))
    else:
        r = outcome.results[which]
        files.append((output, dumps_json({**r.model_dump(), "verdict": "PASS" if r.passed else "FAIL",
                                          "provenance": prov})))
    for path, data in files:
        atomic_write_bytes(path, data)


def _print(which: str, outcome: AcceptOutcome) -> None:
    if outcome.matrix is None:
        r = outcome.results[which]
        rows = [(c.name, c.verdict) for c in r.checks] or [(which, f"not run: {r.reason}")]
        console.print(table(f"{which} ({r.mode})", ["check", "verdict"], rows))
        console.print(f"{which}: [bold]{'PASS' if r.passed else 'FAIL'}[/bold] ({r.mode})")
        return
    m = outcome.matrix.model_dump()
    rows = [(k, v["mode"], v["verdict"]) for k, v in m["scenarios"].items()]
    rows += [(k, "", v) for k, v in m["closed_loop"].items() if k.startswith("A0")]
    console.print(table("swarm acceptance matrix", ["item", "mode", "verdict"], rows))
    console.print(table("compliance (seed section 12)", ["key", "value"], [
        ("swarmness_score", m["swarmness_score"]), ("minimal_compliance_score", m["minimal_compliance_score"]),
        ("grade", m["grade"]), ("caps_applied", ", ".join(c["name"] for c in m["caps_applied"]) or "none"),
        ("MINIMAL_CLOSED_LOOP_PASS", m["MINIMAL_CLOSED_LOOP_PASS"]),
        ("LOCAL_SCALE_AND_BUDGET_PASS", m["LOCAL_SCALE_AND_BUDGET_PASS"])], digits=1))
    for line in m["not_live"]:
        console.print(f"[yellow]not live[/yellow] {line}")


@click.command("accept", cls=Command)
@click.argument("scenario", type=click.Choice([*SCENARIOS, "all"], case_sensitive=False))
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSON file (the matrix for 'all', with a Markdown twin beside it; S07/S08 also write "
                   "FILE.model-io.json/.md)")
@click.option("--store", default=None, help="sqlite:///PATH or postgresql://... (default: a temporary SQLite file)")
@click.option("--redis", "redis_url", default=None, help="redis://HOST:PORT/DB[?prefix=P]: the Redis mirror S07 reads")
@click.option("--blobs", "blob_root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="blob store folder (default: temporary)")
@click.option("--base-url", default=None,
              help="a real OpenAI-compatible gateway (NewAPI, vLLM, Ollama, ...): S07/S08 run live; without it "
                   "they run as replay against a local test server")
@click.option("--api-key-env", default=DEFAULT_API_KEY_ENV, show_default=True,
              help="environment variable holding the gateway's API key (never logged)")
@click.option("--tpm", type=click.IntRange(1, 10**9), default=100_000, show_default=True,
              help="tokens-per-minute budget every S07 model call reserves from")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="pytest JUnit XML report of tests/swarm (evidence for A02)")
@click.option("--sdist", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="the downloaded fastapi-0.115.0.tar.gz: S07 also checks the bundled excerpts against it")
@click.option("--quick", is_flag=True, help="with 'all': skip the full-size L01 run (reported as not run)")
def accept(scenario: str, output: Path | None, store: str | None, redis_url: str | None, blob_root: Path | None,
           base_url: str | None, api_key_env: str, tpm: int, junit: Path | None, sdist: Path | None,
           quick: bool) -> None:
    """Run acceptance scenarios from real runs and report every check with its evidence."""
    which = scenario.upper() if scenario.lower() != "all" else "all"
    for path in (junit, sdist):
        if path is not None and not path.is_file():
            raise BadInput("file not found", source=path)
    if junit is not None:
        junit_check(junit)  # a malformed report is refused before minutes of scenarios run
    opts = AcceptOptions(store=store, redis_url=redis_url, blob_root=blob_root, base_url=base_url,
                         api_key_env=api_key_env, junit=junit, quick=quick, tpm=tpm, sdist=sdist)
    outcome = run_acceptance(which, opts, on_step=lambda s: note(f"running {s}"))
    if output is not None:
        _write_outputs(which, outcome, opts, output)
    _print(which, outcome)
    passed = outcome.matrix.MINIMAL_CLOSED_LOOP_PASS if outcome.matrix else outcome.results[which].passed
    if not passed:
        raise SystemExit(ExitCode.FAILED)


def demo_acceptance(out_dir: Path) -> None:
    """The acceptance matrix of what runs here (no network, no services): S07/S08 replay, S09, S10,
    L02, A01-A07; L01 is not run (full size). Writes ``acceptance-matrix.json``/``.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    opts = AcceptOptions(quick=True, blob_root=out_dir / "acceptance-blobs", prefix="demo")
    try:
        outcome = run_acceptance("all", opts)
        _write_outputs("all", outcome, opts, out_dir / "acceptance-matrix.json")
    except Exception as exc:  # noqa: BLE001 - the demo must not raise; say what failed
        console.print(f"[red]swarm acceptance demo failed: {type(exc).__name__}: {exc}[/red]")
        return
    _print("all", outcome)
    console.print("S07/S08 ran in [bold]replay[/bold] mode (local test server, deterministic responder): they do "
                  "not count in the compliance score; run `benchscore swarm accept all --base-url URL` for live.")
    console.print(f"acceptance matrix: {out_dir / 'acceptance-matrix.md'}")
