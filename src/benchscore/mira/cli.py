"""`benchscore mira ...`: score, calibrate, judge-packets, judge, project (wiring only).

Importing this module costs click and ``benchscore.common.cli`` only: each command imports what it
needs, and ``FORMATS`` (for ``benchscore schema``) is built on first access (PEP 562).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from benchscore.common.cli import exit_for
from benchscore.common.cli import group as _group
from benchscore.common.errors import BadInput
from benchscore.common.swapped import Kind, keys, swappable

if TYPE_CHECKING:  # pragma: no cover
    from . import formats as F


#: the formats of the inputs, as a refusal names them when two are given to each other's options (swapped.py)
CONTRACT = Kind("a Mira contract", keys("benchmark_id", "cases"))
REPETITIONS = Kind("Mira repetition records", keys("case_id", "repetition", "terminal_state"), lines=True)
DEVIATIONS = Kind("Mira deviations", keys("deviations"))
VERDICTS = Kind("judge verdicts", keys("model", "verdicts"))
CALIBRATION = Kind("a judge calibration set", keys("packet_id", "criterion_id"), lines=True)
OBSERVATIONS = Kind("reference observations", keys("case_id", "observation_id"), lines=True)
POLICY = Kind("a calibration policy", keys("policy", "min_observations"))


def _formats() -> dict[str, type]:
    from . import formats as F

    return {
        "mira-contract": F.Contract,
        "mira-repetition": F.RepetitionRecord,
        "mira-deviations": F.Deviations,
        "mira-observation": F.Observation,
        "mira-calibration-policy": F.CalibrationPolicy,
        "mira-judge-packet": F.JudgePacket,
        "mira-judge-packet-index": F.JudgePacketIndex,
        "mira-judge-verdicts": F.JudgeVerdicts,
        "mira-judge-calibration": F.CalibrationPacket,
        "mira-judge-report": F.JudgeReport,
        "mira-score": F.ScoreOutput,
        "mira-public": F.PublicProjection,
        "mira-inspect-mapping": F.InspectMapping,
    }


#: the provenance metric ids this domain's outputs carry -> what writes them (``benchscore list``)
METRIC_IDS = {
    "mira:{benchmark_id}@{contract_version}/score": "mira score: the formal score of a run",
    "mira:{benchmark_id}@{contract_version}/public": "mira project: the public projection of a score",
    "mira:{benchmark_id}@{contract_version}/calibrate": "mira calibrate: a contract with calibrated T_soft",
    "mira:{benchmark_id}@{contract_version}/judge-packets": "mira judge-packets: the judge's packet index",
    "mira:judge/{model}": "mira judge: the verdicts of one judge model",
    "mira:judge-report/{model}": "mira judge-report: one judge model measured against known verdicts",
}

#: format name -> pydantic model, for `benchscore schema`; built on first access (see __getattr__)
FORMATS: dict[str, type]


def __getattr__(name: str) -> Any:
    if name == "FORMATS":
        value = globals()["FORMATS"] = _formats()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


METHOD = {
    "judge": "one fresh conversation per (repetition, judge criterion) packet holding only the frozen question, "
    "the user-visible prompt and that repetition's own evidence, asking for exactly one word; an answer is a "
    "verdict only when it is exactly pass or fail once surrounding whitespace and one trailing period are "
    "stripped, anything else is judge_failed; the judge never decides terminal state, timing, tool "
    "call/approval/resume, hard-fail, side effects or deterministic criteria",
    "timing": "T_hard = 2 x T_soft; timing_credit 1.00 <= T_soft, 0.85 in (T_soft, 1.25 T_soft], 0.70 in "
    "(1.25 T_soft, 1.5 T_soft], 0.50 in (1.5 T_soft, T_hard], 0.00 > T_hard; post-cutoff completions stay 0",
    "comparability": "canonical and adapted repetitions are valid comparable and enter formal denominators; "
    "noncanonical is diagnostic; invalid is infrastructure, never attributed to Mira; a case is formal only "
    "with its planned valid comparable repetitions (the first N by repetition index): "
    "valid_comparable_repetition_count counts those, beyond_planned_count the valid comparable ones beyond "
    "the plan, which no metric uses",
    "aggregation": "overall metrics pool the used repetitions of every automated_scored case and are null "
    "unless every such case is formal; diagnostic_untimed cases are aggregated apart",
}


def _metric_id(contract: F.Contract, what: str) -> str:
    return f"mira:{contract.benchmark_id}@{contract.contract_version}/{what}"


SCORE_PHASES = ("reading the contract", "reading repetitions", "scoring", "writing")


def run_score(contract_path: Path, repetitions_path: Path, output: Path,
              deviations_path: Path | None = None, verdicts_path: Path | None = None,
              on_phase: Callable[[str], None] | None = None, calibration_path: Path | None = None) -> dict[str, Any]:
    """Read, validate, score and write; returns the output dict. ``on_phase`` hears each of SCORE_PHASES.
    ``calibration_path``: known verdicts of this run's judge packets (the judge measured, the numbers corrected)."""
    from .records import no_gc

    with no_gc():
        return _run_score(contract_path, repetitions_path, output, deviations_path, verdicts_path,
                          on_phase or (lambda phase: None), calibration_path)


def _run_score(contract_path: Path, repetitions_path: Path, output: Path,
               deviations_path: Path | None, verdicts_path: Path | None,
               on_phase: Callable[[str], None], calibration_path: Path | None = None) -> dict[str, Any]:
    from benchscore.common.atomic import atomic_write_json
    from benchscore.common.provenance import provenance
    from benchscore.stats.intervals import DEFAULT_SEED, LEVEL

    from .judge import merge_verdicts
    from .judged import METHOD as JUDGE_METHOD
    from .records import load_contract, load_deviations, load_repetitions, load_verdicts, require_timing
    from .scoring import score as score_all
    from .sources import score_edit_deviations, sources

    on_phase(SCORE_PHASES[0])
    loaded = load_contract(contract_path)
    require_timing(loaded)
    on_phase(SCORE_PHASES[1])
    reps = load_repetitions(repetitions_path, loaded)
    deviations = load_deviations(deviations_path)[0] if deviations_path else []
    deviations = deviations + [d for d in score_edit_deviations(reps.records)  # accepted inspect_ai score edits
                               if d["id"] not in {x["id"] for x in deviations}]
    judge_failed: dict[tuple[str, int, str], str] = {}
    inputs: dict[str, Path] = {"contract": contract_path, "repetitions": repetitions_path}
    model = None
    if verdicts_path is not None:
        verdicts, _ = load_verdicts(verdicts_path)
        judge_failed = merge_verdicts(loaded.sha256, loaded.cases, reps.records, verdicts.verdicts, str(verdicts_path))
        inputs["verdicts"] = verdicts_path
        model = verdicts.model
    if deviations_path is not None:
        inputs["deviations"] = deviations_path
    calibration = None
    if calibration_path is not None:
        from .records import load_calibration

        packets, lines = load_calibration(calibration_path)
        calibration = (packets, lines, str(calibration_path))
        inputs["judge_calibration"] = calibration_path
    on_phase(SCORE_PHASES[2])
    result = score_all(loaded.contract.cases, reps.records, judge_failed)
    from .judged import score_judge

    judge_block = score_judge(result, loaded.cases, reps.records, judge_failed, contract_sha256=loaded.sha256,
                              model=model, calibration=calibration)
    on_phase(SCORE_PHASES[3])
    c = loaded.contract
    policy = c.calibration_policy.model_dump(mode="json") if c.calibration_policy else None
    out = {
        "benchmark_id": c.benchmark_id,
        "contract_version": c.contract_version,
        "contract_sha256": loaded.sha256,
        **result,
        "judge": judge_block,
        "deviations": deviations,
        "method": {**METHOD, "calibration_policy": policy,
                   **({"judge_" + k: v for k, v in JUDGE_METHOD.items()} if calibration is not None else {})},
        "provenance": provenance(_metric_id(c, "score"), inputs, seed=DEFAULT_SEED if calibration is not None else None,
                                 extra={**(sources(reps.records) or {}), "intervals": {"level": LEVEL}}),
    }
    atomic_write_json(output, out)
    return out


def run_calibrate(contract: Path, observations: Path, policy: Path | None, output: Path) -> dict[str, Any]:
    """Read, calibrate, write the new contract (with its provenance); returns it."""
    from benchscore.common.atomic import atomic_write_json
    from benchscore.common.provenance import provenance
    from benchscore.common.readers import validate

    from . import formats as F
    from .calibration import calibrate as calibrate_contract
    from .records import load_contract, load_observations, load_policy

    loaded = load_contract(contract)
    obs, _ = load_observations(observations, loaded)
    # --policy wins; else the contract's own frozen policy; else the mira-tsoft/v1 defaults
    pol = load_policy(policy)[0] if policy else (loaded.contract.calibration_policy or F.CalibrationPolicy())
    new = calibrate_contract(loaded.contract, obs, pol)
    inputs: dict[str, Path] = {"contract": contract, "observations": observations}
    if policy:
        inputs["policy"] = policy
    new["provenance"] = provenance(_metric_id(loaded.contract, "calibrate"), inputs,
                                   extra={"calibration_policy": pol.policy})
    validate(F.Contract, new, source="calibrated contract")  # the output is itself a valid contract
    atomic_write_json(output, new)
    return new


def run_from_inspect(logs: list[Path | str], contract: Path, mapping: Path, output: Path,
                     on_sample: Callable[[], None] | None = None, *, accept_score_edits: bool = False) -> Any:
    """Read the mapping and the contract, convert every log's samples, write the repetitions JSONL atomically
    (empty when no sample gave a repetition: every planned one is then missing)."""
    from benchscore.common.atomic import atomic_write_bytes
    from benchscore.common.provenance import sha256_bytes
    from benchscore.common.readers import read_json_bytes, validate

    from . import formats as F
    from .inspect_logs import convert
    from .records import load_contract, strict_loads

    raw = read_json_bytes(mapping)
    parsed = validate(F.InspectMapping, strict_loads(raw, mapping), source=mapping)
    loaded = load_contract(contract)
    conv = convert(logs, loaded, parsed, str(mapping), sha256_bytes(raw), on_sample,
                   accept_score_edits=accept_score_edits)
    atomic_write_bytes(output, conv.lines())
    return conv


def _wrote(what: str) -> None:
    from benchscore.common.terminal import print_line

    print_line(f"wrote {what}")


@_group("mira")
def group() -> None:
    """Mira agent benchmark: repetitions, timing credit, Task Success, Reliability, judge isolation."""


_file = click.Path(exists=False, dir_okay=False, path_type=Path)
_folder = click.Path(file_okay=False, path_type=Path)
_quiet = click.option("--quiet", is_flag=True, help="Print nothing on success.")


@swappable(contract=CONTRACT, repetitions=REPETITIONS, deviations=DEVIATIONS, verdicts=VERDICTS,
            judge_calibration=CALIBRATION)
@group.command()
@click.option("--contract", required=True, type=_file, help="Contract JSON (frozen case set).")
@click.option("--repetitions", required=True, type=_file, help="Repetition records JSONL.")
@click.option("--deviations", type=_file, help="Methodology deviations JSON, carried into the report unchanged.")
@click.option("--verdicts", type=_file, help="Verdicts JSON written by `mira judge` to merge in.")
@click.option("--judge-calibration", "judge_calibration", type=_file,
              help="Known verdicts of some of this run's judge packets (mira-judge-calibration JSONL): the judge's "
                   "agreement is measured and Task Success and Reliability are corrected for its errors, beside the "
                   "contract's own numbers.")
@click.option("--output", required=True, type=_file, help="Score JSON to write.")
@_quiet
def score(contract: Path, repetitions: Path, deviations: Path | None, verdicts: Path | None,
          judge_calibration: Path | None, output: Path, quiet: bool) -> None:
    """Score repetitions against a contract: per repetition, per case and overall, each number with its derivation.

    Prints every number of the score (aggregates, cases, repetitions, what is missing, deviations);
    the overall Task Success, Reliability, Pass@1, Stable@3 and Complete@3 carry a 95 % interval. Beside
    them, the judge: its agreement with known verdicts (--judge-calibration) and the corrected Task Success
    and Reliability, or "judge not calibrated".
    """
    from benchscore.common.terminal import progress

    with progress(disable=quiet) as bar:
        task = bar.add_task("scoring", total=len(SCORE_PHASES))

        def on_phase(phase: str) -> None:
            if phase != SCORE_PHASES[0]:
                bar.advance(task)
            bar.update(task, description=phase)

        out = run_score(contract, repetitions, output, deviations, verdicts, on_phase, judge_calibration)
        bar.advance(task)
    if not quiet:
        from .terminal import print_score

        print_score(out)
        _wrote(str(output))
    exit_for(out["status"])  # 0 complete; 1 incomplete (the score is written)


@group.command("from-inspect")
@click.argument("logs", nargs=-1, required=True)
@click.option("--contract", required=True, type=_file, help="Contract JSON: the cases the samples are.")
@click.option("--mapping", required=True, type=_file,
              help="Mapping JSON (mira-inspect-mapping): scores -> criteria, execution mode, errors, approvals.")
@click.option("--output", required=True, type=_file, help="Repetition records JSONL to write.")
@click.option("--accept-score-edits", is_flag=True,
              help="Take scores edited by hand after the run (inspect_ai edit_score) as they were edited; each is "
                   "recorded and becomes a methodology deviation in mira score. Without it, an edited score is refused.")
@_quiet
def from_inspect(logs: tuple[str, ...], contract: Path, mapping: Path, output: Path, accept_score_edits: bool,
                 quiet: bool) -> None:
    """Turn inspect_ai logs into Mira repetition records: one per sample x epoch.

    LOGS: log files (.eval/.json), log folders, eval-set folders, or fsspec URLs of any of them
    (s3://bucket/logs/). The case is the sample id (or the mapping's case_ids), the repetition the
    epoch; working_time is the elapsed time; a time/working limit is the timing cutoff;
    infrastructure errors are invalid, the agent's leave every criterion unmet, retried attempts
    included; approvals are mapped. Exit 1 when a log's run did not finish (status cancelled or
    error) or a planned repetition has no record. Needs the inspect extra. See docs/inspect.md.
    """
    from benchscore.common.cli import refuse_overwriting_inputs
    from benchscore.common.errors import ExitCode
    from benchscore.common.terminal import progress

    refuse_overwriting_inputs([Path(p) for p in logs if "://" not in p], [("--output", output)])
    with progress(disable=quiet) as bar:
        task = bar.add_task("reading samples", total=None)
        conv = run_from_inspect(list(logs), contract, mapping, output, lambda: bar.advance(task),
                                accept_score_edits=accept_score_edits)
    if not quiet:
        from .terminal import print_conversion

        print_conversion(conv, str(output))
    if not conv.final:
        raise SystemExit(ExitCode.FAILED)


@swappable(contract=CONTRACT, observations=OBSERVATIONS, policy=POLICY)
@group.command()
@click.option("--contract", required=True, type=_file, help="Contract JSON whose cases get their T_soft budgets.")
@click.option("--observations", required=True, type=_file, help="Controlled reference observations JSONL.")
@click.option("--policy", type=_file,
              help="Calibration policy JSON (default: the contract's calibration_policy, else mira-tsoft/v1 defaults).")
@click.option("--output", required=True, type=_file, help="The calibrated contract to write.")
@_quiet
def calibrate(contract: Path, observations: Path, policy: Path | None, output: Path, quiet: bool) -> None:
    """Set T_soft per case from reference observations; unstable cases become diagnostic_untimed."""
    new = run_calibrate(contract, observations, policy, output)
    if not quiet:
        from .terminal import print_calibration

        print_calibration(new)
        _wrote(str(output))


@swappable(contract=CONTRACT, repetitions=REPETITIONS)
@group.command("judge-packets")
@click.option("--contract", required=True, type=_file, help="Contract JSON (frozen case set): the judge criteria.")
@click.option("--repetitions", required=True, type=_file,
              help="Repetition records JSONL whose judge criteria are still to be answered.")
@click.option("--output-dir", "output_dir", type=_folder, help="Folder to create (must not exist): a new folder each time, unlike --output-dir elsewhere (a folder the command owns, replaced as a whole).  "
                   "[required]")
@click.option("--out", "out_dir", type=_folder, hidden=True, help="Old name of --output-dir.")
@_quiet
def judge_packets(contract: Path, repetitions: Path, output_dir: Path | None, out_dir: Path | None,
                  quiet: bool) -> None:
    """One isolated packet per (repetition, judge criterion), each with its sha256, plus index.json."""
    if output_dir is not None and out_dir is not None:
        raise click.UsageError("give the folder once: --output-dir (--out is its old name)")
    folder = output_dir or out_dir
    if folder is None:
        raise click.UsageError("Missing option '--output-dir'.")
    if folder.exists():
        raise BadInput("already exists; choose a new folder", source=folder)
    from benchscore.common.atomic import atomic_directory, atomic_write_json
    from benchscore.common.provenance import provenance

    from .judge import build_packets
    from .records import load_contract, load_repetitions

    loaded = load_contract(contract)
    reps = load_repetitions(repetitions, loaded)
    packets = build_packets(loaded.sha256, loaded.cases, reps.records, source=str(repetitions), lines=reps.lines)
    with atomic_directory(folder) as tmp:
        for p in packets:
            atomic_write_json(tmp / f"{p['packet_id']}.json", p)
        atomic_write_json(tmp / "index.json", {
            "contract_sha256": loaded.sha256,
            "packets": [{"packet_id": p["packet_id"], "file": f"{p['packet_id']}.json", "sha256": p["sha256"]}
                        for p in packets],
            "provenance": provenance(_metric_id(loaded.contract, "judge-packets"),
                                     {"contract": contract, "repetitions": repetitions}),
        })
    if not quiet:
        _wrote(f"{len(packets)} judge packets to {folder}")


def read_packets(folder: Path) -> tuple[list[F.JudgePacket], str]:
    """Read index.json and every packet it lists, checking each packet's sha256 and that every
    packet was built from the index's contract; returns the packets and that contract's sha256."""
    from benchscore.common.readers import read_json_bytes, validate

    from . import formats as F
    from .judge import packet_sha256
    from .records import strict_loads

    index_path = folder / "index.json"
    index = strict_loads(read_json_bytes(index_path), index_path)
    if not isinstance(index, dict) or not isinstance(index.get("packets"), list):
        raise BadInput("expected an object with a 'packets' list", source=index_path, field="packets")
    contract_sha256 = index.get("contract_sha256")
    if not isinstance(contract_sha256, str):
        raise BadInput("expected the contract's sha256 (a string)", source=index_path, field="contract_sha256")
    out = []
    for i, entry in enumerate(index["packets"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) or "/" in entry["file"]:
            raise BadInput("expected {packet_id, file, sha256} with a plain file name", source=index_path,
                           record=f"packets[{i}]", field="file")
        path = folder / entry["file"]
        packet = validate(F.JudgePacket, strict_loads(read_json_bytes(path), path), source=path)
        if packet_sha256(packet.model_dump(mode="json")) != packet.sha256 or packet.sha256 != entry.get("sha256"):
            raise BadInput("packet content does not match its sha256", source=path, field="sha256")
        if packet.contract_sha256 != contract_sha256:
            raise BadInput(f"packet was built from contract {packet.contract_sha256}, the index's is {contract_sha256}",
                           source=path, field="contract_sha256")
        out.append(packet)
    return out, contract_sha256


@group.command()
@click.option("--packets", "packets_dir", type=_folder,
              help="Folder written by `mira judge-packets` (one packet per judge criterion and repetition).")
@click.option("--calibration", "calibration", type=_file,
              help="A judge calibration set (mira-judge-calibration JSONL) to judge instead of a packets folder; "
                   "the judge's agreement with its known verdicts is printed (and written with --report).")
@click.option("--report", "report_path", type=_file,
              help="With --calibration: also write the judge report (as `mira judge-report` would).")
@click.option("--base-url", required=True, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
@click.option("--model", required=True, help="Model id the endpoint lists at GET /v1/models (checked first).")
@click.option("--api-key-env", default="MIRA_JUDGE_API_KEY", show_default=True,
              help="Environment variable holding the API key (never written anywhere).")
@click.option("--max-retries", default=4, show_default=True, type=click.IntRange(0, 20),
              help="Retries per call on 429/5xx/timeouts (backoff honours retry-after).")
@click.option("--timeout", default=30.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds to wait for one answer (a small model on a busy CPU can need tens of seconds).")
@click.option("--output", required=True, type=_file, help="Verdicts JSON to write.")
@click.option("--constraint", type=click.Choice(["auto", "none"]), default="auto", show_default=True,
              help="auto: ask for {\"verdict\": ...} under the schema constraint the endpoint enforces (probed "
                   "once), free text where it enforces none; none: free text (one word).")
@_quiet
def judge(packets_dir: Path | None, calibration: Path | None, report_path: Path | None, base_url: str, model: str,
          api_key_env: str, max_retries: int, timeout: float, output: Path, constraint: str, quiet: bool) -> None:
    """Judge every packet in a fresh conversation; answers other than pass/fail are judge_failed.

    Where the endpoint enforces a JSON schema (probed once: response_format json_schema, json_object with
    schema, or a grammar), the model answers {"verdict": "pass"} or {"verdict": "fail"} under it; else
    it is asked for exactly one word (at most 4 tokens), and `pass` or `fail`, after stripping
    surrounding whitespace and one trailing period, is a verdict. Anything else is judge_failed (never
    repaired). Exit 0 when every packet got a pass/fail verdict, 1 when any is judge_failed (the
    verdicts file is still written), 2 on bad input or an unreachable endpoint. With --calibration, the
    packets are a calibration set's and the judge's agreement with their known verdicts is printed.
    """
    from benchscore.common.atomic import atomic_write_json
    from benchscore.common.errors import ServiceUnavailable
    from benchscore.common.llm import LLMError, ModelMismatch, ModelNotFound, connect
    from benchscore.common.provenance import provenance
    from benchscore.common.terminal import progress

    from .judge import ANSWER_RULE, VERDICT_FORMAT, judge_packet, max_tokens

    if (packets_dir is None) == (calibration is None):
        raise click.UsageError("give the packets to judge once: --packets DIR or --calibration FILE")
    if report_path is not None and calibration is None:
        raise click.UsageError("--report needs --calibration (a report measures the judge against known verdicts)")
    if calibration is not None:
        from .records import load_calibration

        known_packets, _ = load_calibration(calibration)
        packets = list(known_packets)
        shas = {p.contract_sha256 for p in packets}
        contract_sha256 = shas.pop() if len(shas) == 1 else sorted(shas)
        read_from: dict[str, Path] = {"calibration": calibration}
    else:
        packets, contract_sha256 = read_packets(packets_dir)
        read_from = {"packets_index": packets_dir / "index.json"}
    client = connect(base_url, model, api_key_env=api_key_env, role="judge", max_retries=max_retries,
                     timeout=timeout)
    verdicts = []
    with client, progress(disable=quiet) as bar:
        probe = None
        mode = "none"
        if constraint == "auto":
            try:
                probe = client.constraint_for(model)
            except (ModelNotFound, ModelMismatch) as exc:
                raise BadInput(f"model {model!r} is not served by {client.endpoint}: {exc}", field="--model") from None
            except LLMError as exc:
                raise ServiceUnavailable(f"judge endpoint: {exc}") from None
            mode = probe.mode
        task = bar.add_task("judging", total=len(packets))

        def chat(messages: list[dict[str, str]]) -> tuple[str | None, dict[str, Any] | None, str | None]:
            try:
                res = client.chat(model, messages, temperature=0.0, max_tokens=max_tokens(mode),
                                  answer_format=VERDICT_FORMAT if mode != "none" else None, constraint=mode)
            except (ModelNotFound, ModelMismatch) as exc:
                raise BadInput(f"model {model!r} is not served by {client.endpoint}: {exc}", field="--model") from exc
            except LLMError as exc:
                return None, exc.record.model_dump(mode="json") if exc.record else None, str(exc)
            return res.text, res.record.model_dump(mode="json"), None

        for p in packets:
            verdicts.append(judge_packet(p, chat, mode))
            bar.advance(task)
    out = {
        "model": model,
        "verdicts": verdicts,
        "provenance": provenance(f"mira:judge/{model}", read_from,
                                 extra={"endpoint": client.endpoint, "contract_sha256": contract_sha256,
                                        "temperature": 0.0, "max_tokens": max_tokens(mode), "constraint": mode,
                                        "constraint_probe": probe.tried if probe is not None else "not probed "
                                        "(--constraint none)", "answer_rule": ANSWER_RULE}),
    }
    atomic_write_json(output, out)
    failed = sum(1 for v in verdicts if v["verdict"] == "judge_failed")
    if not quiet:
        from .terminal import print_verdicts

        print_verdicts(out)
        _wrote(f"{len(verdicts)} verdicts of {model} ({failed} judge_failed) to {output}")
    if calibration is not None:
        from benchscore.common.provenance import recording

        with recording("benchscore mira judge-report", judge_report, calibration=calibration, verdicts=output,
                       output=report_path):
            rep = run_judge_report(calibration, output, report_path)
        if not quiet:
            from .terminal import print_judge_report

            print_judge_report(rep)
            if report_path is not None:
                _wrote(str(report_path))
    if failed:
        # the verdicts file is written (it records every call and reason); the exit code says the
        # judging is not complete, so a script cannot mistake failed calls for a finished judge
        click.echo(f"{failed} of {len(verdicts)} packets are judge_failed; see {output}", err=True)
        exit_for(False)


def run_judge_report(calibration: Path, verdicts_path: Path, output: Path | None) -> dict[str, Any]:
    """Read a calibration set and a judge's verdicts on it, measure the judge, write the report (when
    ``output``); returns it."""
    from benchscore.common.atomic import atomic_write_json
    from benchscore.common.provenance import provenance
    from benchscore.common.readers import validate
    from benchscore.stats.intervals import DEFAULT_SEED

    from . import formats as F
    from .judged import report
    from .records import load_calibration, load_verdicts

    packets, _ = load_calibration(calibration)
    verdicts, _ = load_verdicts(verdicts_path)
    out = report(packets, verdicts.verdicts, verdicts.model, str(verdicts_path), seed=DEFAULT_SEED)
    out["provenance"] = provenance(f"mira:judge-report/{verdicts.model}",
                                   {"calibration": calibration, "verdicts": verdicts_path}, seed=DEFAULT_SEED)
    validate(F.JudgeReport, out, source="judge report")
    if output is not None:
        atomic_write_json(output, out)
    return out


@swappable(calibration=CALIBRATION, verdicts=VERDICTS)
@group.command("judge-report")
@click.option("--calibration", required=True, type=_file,
              help="The calibration set: judge packets with the verdict a person decided (mira-judge-calibration JSONL).")
@click.option("--verdicts", required=True, type=_file,
              help="The judge's verdicts on those packets (`mira judge --calibration` writes them).")
@click.option("--output", required=True, type=_file, help="Judge report JSON to write.")
@_quiet
def judge_report(calibration: Path, verdicts: Path, output: Path, quiet: bool) -> None:
    """Measure a judge against known verdicts: sensitivity, specificity, Cohen's kappa with 95 % intervals.

    Prints the 2 x 2 table, the share of each answer, each statistic with its interval (or why it has
    none), "this judge always answers pass" when it does, and whether the judge is measured (kappa's
    interval above 0) or its criteria are not decided by a measured judge.
    """
    out = run_judge_report(calibration, verdicts, output)
    if not quiet:
        from .terminal import print_judge_report

        print_judge_report(out)
        _wrote(str(output))


@group.command()
@click.option("--score", "score_path", required=True, type=_file, help="Score JSON from `mira score`.")
@click.option("--output", required=True, type=_file, help="Public projection JSON to write.")
@_quiet
def project(score_path: Path, output: Path, quiet: bool) -> None:
    """Public projection: only allowlisted fields (no fixtures, trajectories, evaluator details, credentials)."""
    from benchscore.common.atomic import atomic_write_json
    from benchscore.common.provenance import provenance
    from benchscore.common.readers import read_json_bytes, validate

    from . import formats as F
    from .projection import project as project_score
    from .records import strict_loads

    parsed = strict_loads(read_json_bytes(score_path), score_path)
    sc = validate(F.ScoreOutput, parsed, source=score_path)
    out = project_score(sc, deviations=parsed["deviations"])
    out["provenance"] = provenance(f"mira:{sc.benchmark_id}@{sc.contract_version}/public", {"score": score_path})
    validate(F.PublicProjection, out, source="public projection")
    atomic_write_json(output, out)
    if not quiet:
        from .terminal import print_public

        print_public(out)
        _wrote(str(output))
    exit_for(out["status"])  # 0 complete; 1 incomplete (the projection is written)


def demo(out_dir: Path) -> None:
    """Score the bundled demo (every status), write its public projection and calibrated contract."""
    from .demo import run_demo

    run_demo(out_dir)


def verify_kinds() -> list[Any]:
    """The kinds of mira output, each told apart by validation against its model (``benchscore verify``)."""
    from benchscore.common.verify import Kind

    from . import formats as F

    def mira(suffix: str) -> Any:
        return lambda m: m.startswith("mira:") and m.endswith(suffix)

    return [
        Kind("mira score", (F.ScoreOutput,), mira("/score"), "mira:ID@VERSION/score", ("benchscore mira score",)),
        Kind("mira public projection", (F.PublicProjection,), mira("/public"), "mira:ID@VERSION/public",
             ("benchscore mira project",)),
        Kind("mira calibrated contract", (F.Contract,), mira("/calibrate"), "mira:ID@VERSION/calibrate",
             ("benchscore mira calibrate",)),
        Kind("mira judge packet index", (F.JudgePacketIndex,), mira("/judge-packets"),
             "mira:ID@VERSION/judge-packets", ("benchscore mira judge-packets",)),
        Kind("mira judge report", (F.JudgeReport,), lambda m: m.startswith("mira:judge-report/"),
             "mira:judge-report/MODEL", ("benchscore mira judge-report",)),
        Kind("mira judge verdicts", (F.JudgeVerdicts,), lambda m: m.startswith("mira:judge/"),
             "mira:judge/MODEL", ("benchscore mira judge",),
             live="mira judge asks a live model for each verdict: they are not a function of its input files "
                  "(a score computed from the verdicts file can be verified)"),
    ]


__all__ = ["FORMATS", "demo", "group", "run_calibrate", "run_from_inspect", "run_score", "verify_kinds"]
