"""``benchscore swarm accept S07|S08|S09|S10|L01|L02|all`` and the acceptance part of the demo.

The runtime's CLI mounts :data:`accept` on the ``swarm`` group; the demo calls
:func:`demo_acceptance`. This module only wires :mod:`benchscore.swarm.accept`.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click

from benchscore.common.atomic import atomic_write_bytes, dumps_json
from benchscore.common.cli import AnyCaseChoice, Command
from benchscore.common.errors import ExitCode
from benchscore.common.provenance import provenance
from benchscore.common.readers import check_file
from benchscore.common.terminal import console, fmt, note, rounded, table

from .accept.evidence import ScenarioResult, evidence_line, failing_parts, one_line, scenario_verdict
from .accept.matrix import AcceptanceMatrix, junit_check, render_markdown
from .accept.runner import SCENARIOS, AcceptOptions, AcceptOutcome, run_acceptance
from .accept.s07 import BUNDLE
from .consensus import ConsensusResult
from .fusion import Candidate, FusedOutput
from .gateway import DEFAULT_API_KEY_ENV, ModelIOReport, constraint_trials, render_model_io_markdown
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


def _write_outputs(which: str, outcome: AcceptOutcome, opts: AcceptOptions, output: Path) -> list[Path]:
    """Render every output first, then write them (atomically each): nothing partial on error.
    Returns the paths written."""
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
        files.append((output, dumps_json({**r.model_dump(), "verdict": scenario_verdict(r)[0],
                                          "verdict_reason": scenario_verdict(r)[1],
                                          "provenance": prov})))
    for path, data in files:
        atomic_write_bytes(path, data)
    return [path for path, _ in files]


# -- terminal output ----------------------------------------------------------------------------
# Every check is one line (condition, verdict, evidence in full), printed with click.echo, which
# never wraps or truncates: piped output is copyable line by line. Summary tables are rich tables
# on a terminal and plain lines otherwise.


def _verdict(passed: bool) -> str:
    return click.style("PASS", fg="green") if passed else click.style("FAIL", fg="red", bold=True)


def _summary(title: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    if console.is_terminal:
        console.print(table(title, columns, rows))
        return
    click.echo(f"{title}:")
    for row in rows:
        click.echo("  " + " | ".join(one_line(rounded(v)) if not isinstance(v, str) else v for v in row))


def _check_lines(key: str, r: ScenarioResult) -> list[str]:
    verdict, why = scenario_verdict(r)
    head = f"{key} ({r.mode}): {_verdict(verdict == 'PASS')}" + (
        f": {why}" if why else f" [{r.mode}: {r.reason}]" if r.reason else "")
    lines = [head]
    for c in r.checks:
        evidence = evidence_line(rounded(c.evidence))  # rounded for reading; the JSON keeps every digit
        parts = failing_parts(c.evidence)
        text = (f"holds: {c.condition}; evidence: {evidence}" if c.passed else
                f"not met: {c.condition}" + (f"; failing: {', '.join(parts)}" if parts else "")
                + f"; evidence: {evidence}")
        lines.append(f"  {_verdict(c.passed)} {key}.{c.name}: {text}")
    if not r.checks and not r.passed:
        lines.append(f"  {_verdict(False)} {key}: {r.failures['scenario']}")
    if r.consensus is not None:
        lines += _consensus_lines(key, r.consensus)
    lines += [f"  {key} details.{k}: {one_line(rounded(v))}" for k, v in r.details.items()]
    return lines


def _consensus_lines(key: str, c: ConsensusResult) -> list[str]:
    lines = [f"  {key} consensus {c.preset}: threshold={fmt(c.threshold)} min_margin={fmt(c.min_margin)} "
             f"evaporation={fmt(c.evaporation)} min_rounds={c.min_rounds} role_weights={one_line(rounded(c.role_weights))} "
             f"round_count={c.round_count} converged={c.converged} accepted_candidate={c.accepted_candidate}"]
    for r in c.rounds:
        votes = ", ".join(f"{v.agent}:{v.candidate}@{fmt(v.confidence)}(+{fmt(inc)})"
                          for v, inc in zip(r.votes, r.vote_increments, strict=True))
        lines.append(f"  {key} consensus round {r.round}: leader={r.leader} leader_share={fmt(r.leader_share)} "
                     f"(threshold {fmt(c.threshold)}) margin={fmt(r.margin)} (min_margin {fmt(c.min_margin)}) "
                     f"converged={r.converged}{' (round < min_rounds)' if r.round < c.min_rounds else ''} "
                     f"scores_after_evaporation={one_line(rounded(r.scores_after_evaporation))} "
                     f"votes=[{votes}] scores={one_line(rounded(r.scores))} challenges={len(r.challenges)} "
                     f"revisions={len(r.revisions)}")
    return lines


def _model_io_lines(report: ModelIOReport) -> list[str]:
    lines = [f"S08 model IO ({report.mode}) {report.endpoint}: calls_issued={report.calls_issued} "
             f"calls_recorded={report.calls_recorded} calls_ok={report.calls_ok} calls_failed={report.calls_failed} "
             f"probe_refusals={len(report.probe_refusals)} tokens_in={report.tokens_in} tokens_out={report.tokens_out} reserved_tokens={report.reserved_tokens} "
             f"cost={one_line(rounded(report.cost))} S08_PASS={report.S08_PASS}"]
    lines += [f"  model {m.model}: calls={m.calls} ok={m.ok} failed={m.failed} probe_refusals={m.probe_refusals} tokens_in={m.tokens_in} "
              f"tokens_out={m.tokens_out} latency_s_mean={fmt(m.latency_s_mean)} latency_s_max={fmt(m.latency_s_max)} "
              f"cost={one_line(rounded(m.cost))}" for m in report.models]
    lines += [f"  constraint {m}: {p.mode} chosen (probe: {constraint_trials(p)})" for m, p in report.constraints.items()]
    if report.probe_refusals:
        lines.append(f"  {len(report.probe_refusals)} constraint probe(s) refused by the endpoint: how it answers a "
                     "constraint it does not take (the chosen one is above), not failed calls")
    lines += [f"  {_verdict(False)} call {f['call_id']} ({f['model']}): {one_line(rounded(f))}" for f in report.failures]
    return lines


def _print(which: str, outcome: AcceptOutcome) -> None:
    """Everything the JSON outputs hold, on the terminal: every check with its condition and
    evidence (a FAIL with its reason), consensus rounds, details, model IO, and the matrix scores."""
    lines: list[str] = []
    if outcome.model_io is not None:
        lines += _model_io_lines(outcome.model_io)
    if outcome.matrix is None:
        lines += _check_lines(which, outcome.results[which])
        for line in lines:
            click.echo(line)
        return
    for key, r in {**outcome.results, **outcome.closed_loop}.items():
        lines += _check_lines(key, r)
    for line in lines:
        click.echo(line)
    m = outcome.matrix.model_dump()
    # each closed-loop item is a scenario result (A01-A07) or a scenario's verdict (S07_..., S10_...)
    items = outcome.closed_loop | {k: outcome.results[k.split("_", 1)[0]] for k in m["closed_loop"]
                                   if k.split("_", 1)[0] in outcome.results}
    _summary("swarm acceptance matrix", ["item", "mode", "verdict", "reason"],
             [(k, v["mode"], v["verdict"], v["verdict_reason"]) for k, v in m["scenarios"].items()]
             + [(k, items[k].mode if k in items else "", v, scenario_verdict(items[k])[1] if k in items else "")
                for k, v in m["closed_loop"].items()])
    _summary("compliance inputs (seed section 12)", ["item", "value", "why"],
             [(k, v, m["compliance_input_reasons"][k]) for k, v in m["compliance_inputs"].items()])
    caps = "; ".join(f"{c['name']} cap={c['cap']} failed={','.join(c['failed_items'])} lowered={c['lowered_score']}"
                     for c in m["caps_applied"]) or "none"
    _summary("compliance (seed section 12)", ["key", "value"], [
        ("swarmness_score", fmt(m["swarmness_score"])),
        ("raw_minimal_compliance_score", str(m["raw_minimal_compliance_score"])),
        ("minimal_compliance_score", fmt(m["minimal_compliance_score"])),
        ("grade", grade_text(m["grade"])), ("caps_applied", caps),
        ("MINIMAL_CLOSED_LOOP_PASS", str(m["MINIMAL_CLOSED_LOOP_PASS"])),
        ("LOCAL_SCALE_AND_BUDGET_PASS", str(m["LOCAL_SCALE_AND_BUDGET_PASS"]))])
    for line in m["not_live"]:
        click.echo(f"{click.style('not live', fg='yellow')}: {line}")


def grade_text(grade: str) -> str:
    """The grade of seed section 12 in English (``minimal_acceptable_swarm`` -> ``minimal acceptable
    swarm``); the seed's Chinese label stays in the JSON (``grade_label``) and the docs."""
    return grade.replace("_", " ")


def _reproduce(ctx: click.Context) -> str:
    """The command line that reruns this command with the same options, on one line."""
    args = ["benchscore", "swarm", "accept", ctx.params["scenario"]]
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if not isinstance(param, click.Option) or value is None or value is False or value == param.default:
            continue
        flag = param.opts[0]
        if param.is_flag:
            args.append(flag)
        else:
            args += [flag, _redact(str(value)) or ""]
    return shlex.join(args)


@click.command("accept", cls=Command)
@click.argument("scenario", type=AnyCaseChoice([*SCENARIOS, "all"]))
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSON file (the matrix for 'all', with a Markdown twin beside it; S07/S08 also write "
                   "FILE.model-io.json/.md)")
@click.option("--store", default=None,
              help="sqlite:///PATH or postgresql://... (default: a temporary SQLite file, deleted after the run, "
                   "because each scenario is a self-contained check whose evidence is the JSON output; "
                   "--store sqlite:///run.db, the default of swarm run, audit, status and stress, keeps it)")
@click.option("--redis", "redis_url", default=None, help="redis://HOST:PORT/DB[?prefix=P]: the Redis mirror S07 reads")
@click.option("--blobs", "blob_root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="blob store folder (default: a temporary folder, deleted after the run, because the scenarios' "
                   "evidence is the JSON output; --blobs swarm-blobs, swarm run's default, keeps the artifacts)")
@click.option("--base-url", default=None,
              help="a real OpenAI-compatible gateway (NewAPI, vLLM, Ollama, ...): S07/S08 run live; without it "
                   "they run as replay against a local test server")
@click.option("--api-key-env", default=DEFAULT_API_KEY_ENV, show_default=True,
              help="environment variable holding the gateway's API key (never logged)")
@click.option("--tpm", type=click.IntRange(1, 10**9), default=100_000, show_default=True,
              help="tokens-per-minute budget every S07 model call reserves from")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="seconds one live model call may take; a call that times out is retried, then fails its step")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="pytest JUnit XML report of tests/swarm (evidence for A02)")
@click.option("--sdist", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="the downloaded fastapi-0.115.0.tar.gz: S07 also checks the bundled excerpts against it")
@click.option("--quick", is_flag=True, help="with 'all': skip the full-size L01 run (reported as not run)")
def accept(scenario: str, output: Path | None, store: str | None, redis_url: str | None, blob_root: Path | None,
           base_url: str | None, api_key_env: str, tpm: int, timeout: float, junit: Path | None, sdist: Path | None,
           quick: bool) -> None:
    """Run acceptance scenarios from real runs and report every check with its evidence."""
    which = scenario  # as documented: S07 ... L02, or all (AnyCaseChoice accepts s07 too)
    for path in (junit, sdist):
        if path is not None:
            check_file(path)  # missing, not a regular file, too large: refused before any scenario runs
    if junit is not None:
        junit_check(junit)  # a malformed report is refused before minutes of scenarios run
    if sdist is not None:
        from .accept.s07 import load_pinned_source, verify_sdist

        verify_sdist(sdist, *load_pinned_source())  # an unreadable archive too, before any store is made
    opts = AcceptOptions(store=store, redis_url=redis_url, blob_root=blob_root, base_url=base_url,
                         api_key_env=api_key_env, junit=junit, quick=quick, tpm=tpm, sdist=sdist,
                         timeout=timeout)
    outcome = run_acceptance(which, opts, on_step=lambda s: note(f"running {s}"))
    written = _write_outputs(which, outcome, opts, output) if output is not None else []
    _print(which, outcome)
    for path in written:
        click.echo(f"wrote: {path}")
    click.echo(f"reproduce: {_reproduce(click.get_current_context())}")
    passed = outcome.matrix.MINIMAL_CLOSED_LOOP_PASS if outcome.matrix else scenario_verdict(outcome.results[which])[0] == "PASS"
    if not passed:
        raise SystemExit(ExitCode.FAILED)


def demo_acceptance(out_dir: Path) -> None:
    """The acceptance matrix of what runs here (no network, no services): S07/S08 replay, S09, S10,
    L02, A01-A07; L01 is not run (full size). A02's evidence is the JUnit report of the bundled unit
    checks, run now (``unit-checks.junit.xml``). Writes ``acceptance-matrix.json``/``.md``."""
    from .accept.unit_checks import write_unit_checks

    out_dir.mkdir(parents=True, exist_ok=True)
    junit = write_unit_checks(out_dir / "unit-checks.junit.xml")
    opts = AcceptOptions(quick=True, blob_root=out_dir / "acceptance-blobs", prefix="demo", junit=junit)
    output = out_dir / "acceptance-matrix.json"
    from benchscore.common.provenance import recording

    try:
        outcome = run_acceptance("all", opts)
        with recording("benchscore swarm accept", accept, scenario="all", quick=True, blob_root=opts.blob_root,
                       junit=junit, output=output):
            written = _write_outputs("all", outcome, opts, output)
    except Exception as exc:  # noqa: BLE001 - the demo must not raise; say what failed
        click.echo(click.style(f"swarm acceptance demo failed: {type(exc).__name__}: {exc}", fg="red"))
        return
    _print("all", outcome)
    click.echo("S07/S08 ran in replay mode (local test server, deterministic responder): they do not count in the "
               "compliance score; run `benchscore swarm accept all --base-url URL` for live.")
    for path in written:
        click.echo(f"wrote: {path}")
    click.echo(f"A02's evidence: {junit} (the bundled unit checks, run now: benchscore.swarm.accept.unit_checks)")
    click.echo("reproduce: " + shlex.join(["benchscore", "swarm", "accept", "all", "--quick", "--blobs",
                                           str(opts.blob_root), "--junit", str(junit), "--output", str(output)]))
