"""S07: seven chained code-review steps on an external repository pinned to a fixed release
(seed sections 2, 3, 8), and S08's model IO audit of the same run.

The external material is fastapi 0.115.0 from its PyPI sdist (``fastapi-0.115.0.tar.gz``,
sha256 in ``data/fastapi-0.115.0/manifest.json``): one excerpt per step is bundled with the
sha256 of the whole file in the sdist and of the excerpt, so nothing reaches the network. The
bundle is verified on every load.

The run: the gateway discovers models (``GET /v1/models``) and takes up to three distinct chat
models from that list, telling aliases of one model apart by a fingerprint probe
(:meth:`~benchscore.swarm.gateway.ModelGateway.identify_models`); three agents share one pool,
agent i with distinct model ``i mod n`` as its primary (with fewer than three distinct models the
chain still runs end to end, reusing them, and only ``three_distinct_models_from_discovery`` fails). Step 1 is put in the pool;
the agent that completes step k puts step k+1 in the pool with a cursor to step k (the shared
chain state); there is no controller. A step's output passes through ``assess_output_quality``
(the S07 checks) and ``score_output``; when the gate fails, the agent falls back to the next
discovered model (at most three tries) before completing the task. The run converges (seed
section 5), the accepted output goes to the blob store, and a multi-round quality consensus of
the three models (S07 preset, and ``min_rounds = 2``: the seed requires ``round_count >= 2``, so
convergence is only declared from the second, confirming round on) votes on the chain, every
vote a task in the ledger.

``mode``: ``replay`` when the gateway is the local test server started here with a
deterministic responder, ``live`` for a real gateway. Only ``live`` counts as S07 (and S08) in
the compliance score.
"""

from __future__ import annotations

import hashlib
import io
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import Field

from benchscore.common.errors import BadInput
from benchscore.common.llm import AnswerFormat
from benchscore.common.models import Format
from benchscore.common.readers import read_bytes
from benchscore.swarm import Agent, BlobStore, Outcome, TaskSpec, audit_pool, open_pool
from benchscore.swarm.agents import run_agents

from ..consensus import S07_QUALITY_CONSENSUS, ConsensusResult, ConsensusSwarm, RoundContext, Vote
from ..gateway import ModelGateway, ModelIdentity
from ..quality import (
    QUALITY_THRESHOLD,
    assess_output_quality,
    detect_quality_risk,
    s07_quality_checks,
    step_marker,
)
from ..scoring import at_least, score_output
from .evidence import Check, ScenarioResult, all_passed, consensus_evidence
from .ledger_consensus import PooledReviewer, consensus_from_ledger

BUNDLE = Path(__file__).parent / "data" / "fastapi-0.115.0"
STEP_CAPABILITY = "s07_step"
STEPS = 7
LOCAL_PROJECT = "benchscore"
CONSENSUS_KIND = "s07_quality"
CONSENSUS_CANDIDATES = ("accept_external_chain", "revise_chain", "reject_chain")
ROLE_WEIGHTS = {"code_reviewer": 1.0, "architecture_reviewer": 1.0, "security_reviewer": 1.2}
S07_MIN_ROUNDS = 2
MIN_ACCEPTED_SCORE = 0.75
#: characters of each step's output shown in the quality evidence (the whole text is in the pool)
TEXT_HEAD_CHARS = 160


# -- the pinned external source -----------------------------------------------------------------


class SourceFile(Format):
    step: int
    path: str
    first_line: int
    last_line: int
    file_sha256: str
    excerpt: str
    excerpt_sha256: str


class PinnedSource(Format):
    repository: str
    package: str
    version: str
    sdist: str
    sdist_sha256: str
    source: str
    license: str
    license_sha256: str
    files: tuple[SourceFile, ...]


def load_pinned_source(bundle: Path = BUNDLE) -> tuple[PinnedSource, dict[int, str]]:
    """The manifest and the excerpt of each step; every excerpt's sha256 is verified."""
    from benchscore.common.readers import read_json, validate

    manifest = validate(PinnedSource, read_json(bundle / "manifest.json"), source=bundle / "manifest.json")
    texts = {}
    for f in manifest.files:
        data = (bundle / f.excerpt).read_bytes()
        if hashlib.sha256(data).hexdigest() != f.excerpt_sha256:
            raise BadInput("excerpt does not match its sha256 in the manifest", source=bundle / f.excerpt)
        texts[f.step] = data.decode("utf-8")
    lic = (bundle / "LICENSE.txt").read_bytes()
    if hashlib.sha256(lic).hexdigest() != manifest.license_sha256:
        raise BadInput("LICENSE.txt does not match its sha256", source=bundle / "LICENSE.txt")
    return manifest, texts


def verify_sdist(path: Path, source: PinnedSource, excerpts: dict[int, str]) -> dict[str, Any]:
    """Check a downloaded sdist (``pip download --no-deps --no-binary :all: fastapi==0.115.0``)
    against the manifest: the archive's sha256, each reviewed file's sha256 inside it, and each
    bundled excerpt equal to the file's lines ``first_line..last_line``. Returns the evidence;
    ``verified`` is the conjunction."""
    import tarfile
    import zlib

    data = read_bytes(path)
    out: dict[str, Any] = {"sdist": Path(path).name, "sdist_sha256_matches":
                           hashlib.sha256(data).hexdigest() == source.sdist_sha256, "files": {}}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = {m.name.split("/", 1)[-1]: m for m in tar.getmembers() if m.isfile()}
            for f in source.files:
                m = members.get(f.path)
                if m is None:
                    out["files"][f.path] = "missing"
                    continue
                body = tar.extractfile(m).read()
                lines = body.decode("utf-8").splitlines(keepends=True)
                ok = (hashlib.sha256(body).hexdigest() == f.file_sha256
                      and "".join(lines[f.first_line - 1:f.last_line]) == excerpts[f.step])
                out["files"][f.path] = "ok" if ok else "mismatch"
    except (tarfile.TarError, OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise BadInput(f"not a readable sdist: {type(exc).__name__}", source=path) from None
    out["verified"] = out["sdist_sha256_matches"] and all(v == "ok" for v in out["files"].values())
    return out


# -- prompts and the replay responder -----------------------------------------------------------


def step_prompt(step: int, source: PinnedSource, excerpt: str, previous_text: str) -> list[dict[str, str]]:
    """The messages of chain step ``step`` (1-based)."""
    f = source.files[step - 1]
    final = (" This is the final step: summarise the whole chain and list every file reviewed so far."
             if step == STEPS else "")
    return [
        {"role": "system", "content": (
            f"You are one agent of a code-review swarm. Review only the external repository {source.repository} "
            f"at release {source.version} (sdist sha256 {source.sdist_sha256[:16]}). Never refuse, stay on topic.")},
        {"role": "user", "content": (
            f"{step_marker(step)} of {STEPS}. Previous step: {step_marker(step - 1)}.\n"
            f"Summary of {step_marker(step - 1)}:\n{previous_text}\n\n"
            f"File {f.path} lines {f.first_line}-{f.last_line} of {source.repository} {source.version}:\n"
            f"```python\n{excerpt}```\n"
            f"Start with '{step_marker(step)} (after {step_marker(step - 1)}) {source.repository} {source.version} "
            f"{f.path}', then at least three '- ' findings naming concrete FastAPI constructs "
            f"(APIRouter, Depends, Request, HTTPException, ...).{final}")},
    ]


def largest_step_reservation(max_tokens: int = 600, previous_chars: int = 4000) -> int:
    """The largest token reservation one S07 step call makes (with a ``previous_chars`` summary):
    a ``--tpm`` below it could never admit that call."""
    from benchscore.common.llm import estimate_tokens

    source, excerpts = load_pinned_source()
    return max(estimate_tokens(step_prompt(k, source, excerpts[k], "x" * previous_chars), max_tokens)
               for k in range(1, STEPS + 1))


_DEF = re.compile(r"^(?:class|def)\s+(\w+)", re.MULTILINE)


def replay_responder(model: str, messages: list[dict[str, Any]]) -> str:
    """The deterministic stand-in for a model in ``replay`` mode: it answers the step prompts by
    reading the excerpt (names defined in it, FastAPI terms it uses) and the vote prompts with a
    fixed vote. It is a replay, not a model, and reports label it so."""
    text = str(messages[-1].get("content", ""))
    if "VOTE:" in text:
        return "VOTE: accept_external_chain CONFIDENCE: 0.86\nThe chain stays on fastapi/fastapi and cites its files."
    if text.startswith("Reply with the word ready"):  # the fingerprint probe: three distinct replay models
        return f"ready - replay model {model}"
    m = re.match(r"(STEP-\d\d) of \d+\. Previous step: (STEP-\d\d)", text)
    f = re.search(r"File (\S+) lines (\d+)-(\d+) of (\S+) (\S+):", text)
    if not m or not f:
        return "QUALITY_FAILURE: the replay responder did not understand the prompt"
    code = text.split("```python\n", 1)[-1].split("```", 1)[0]
    names = _DEF.findall(code)[:3] or ["module-level definitions"]
    terms = [t for t in ("APIRouter", "Depends", "Request", "HTTPException", "Starlette", "BaseModel", "Dependant")
             if t in code][:3]
    terms = terms + [t for t in ("Depends", "Request") if t not in terms][: max(0, 2 - len(terms))]
    lines = [f"{m.group(1)} (after {m.group(2)}) {f.group(4)} {f.group(5)} {f.group(1)} [{model}]",
             f"- {f.group(1)} lines {f.group(2)}-{f.group(3)} define {', '.join(names)}.",
             f"- The code relies on {', '.join(terms)}; their contracts shape how a FastAPI( app routes a Request.",
             f"- Continuing from {m.group(2)}: the behaviour reviewed there constrains this file's error and "
             "validation paths, which we follow here.",
             "- Open question for the next step: how dependency results are cached per request."]
    if m.group(1) == f"STEP-{STEPS:02d}":
        reviewed = re.findall(r"(fastapi/[\w/]+\.py)", text)
        lines.append(f"- Chain summary: files reviewed {', '.join(dict.fromkeys(reviewed))}.")
    return "\n".join(lines)


# -- the agents ----------------------------------------------------------------------------------


class StepPayload(Format):
    step: int
    path: str
    excerpt_sha256: str
    previous_task_id: int | None = None


def _step_handler(pool, gateway: ModelGateway, source: PinnedSource, excerpts: dict[int, str],
                  models: Sequence[str], primary: int):
    """Agent ``primary``'s step behaviour: its model is ``models[primary mod n]``; when the quality
    gate fails, it falls back to the other distinct models in turn (each model once)."""
    primary %= len(models)
    order = list(models[primary:]) + list(models[:primary])

    def handle(claim) -> Outcome:
        p = StepPayload.model_validate(orjson.loads(claim.payload))
        previous_text = f"{step_marker(0)}: review {source.repository} {source.version}, seven files, one per step."
        if p.previous_task_id is not None:
            prev = next(t for t in pool.tasks() if t.task_id == p.previous_task_id)
            previous_text = orjson.loads(prev.output or "{}").get("text", "")
        messages = step_prompt(p.step, source, excerpts[p.step], previous_text)
        tried = []
        text, assessment, model = "", None, order[0]
        for model in order:
            tried.append(model)
            try:
                text = gateway.chat(model, messages, max_tokens=600).text
            except Exception as exc:  # noqa: BLE001 - an LLMError or a budget error: try the next model
                text = f"QUALITY_FAILURE: call failed: {type(exc).__name__}"
            assessment = assess_output_quality(s07_quality_checks(
                text, step=p.step, repository=source.repository, pinned_ref=source.version,
                local_project=LOCAL_PROJECT, source_files=[f.path for f in source.files]))
            if assessment.quality_pass:
                break
        risk = bool(detect_quality_risk(text))
        score = score_output(assessment.Q, quality_pass=assessment.quality_pass, risk=risk,
                             step_index=p.step - 1, final_step=p.step == STEPS)
        if p.step < STEPS:
            nxt = source.files[p.step]
            pool.add_tasks([TaskSpec(capability=STEP_CAPABILITY, max_attempts=1, payload=StepPayload(
                step=p.step + 1, path=nxt.path, excerpt_sha256=nxt.excerpt_sha256,
                previous_task_id=claim.task_id).model_dump())])
        output = {"step": p.step, "model": model, "models_tried": tried, "text": text,
                  "previous_text_sha256": hashlib.sha256(previous_text.encode()).hexdigest(),
                  "quality": assessment.model_dump(), "risk": risk, "task_score": score}
        return Outcome.success(score, orjson.dumps(output).decode())

    return handle


#: a vote's confidence under a constraint: one of eleven steps 0, 0.1, ..., 1
VOTE_CONFIDENCES = tuple(round(i / 10, 1) for i in range(11))


def vote_format(candidates: Sequence[str]) -> AnswerFormat:
    """The vote's schema where the endpoint enforces one: ``{"vote": <candidate>, "confidence": <0..1 by 0.1>}``."""
    return AnswerFormat("s07_vote", {"vote": list(candidates), "confidence": [float(c) for c in VOTE_CONFIDENCES]})


def read_vote(answer: str, candidates: Sequence[str], constraint: str) -> tuple[str, float] | None:
    """(candidate, confidence) of a vote answer, or None (unparseable). Under a constraint: exactly the JSON
    object of :func:`vote_format` (never repaired); free text: ``VOTE: <candidate> CONFIDENCE: <0..1>``."""
    if constraint != "none":
        value = vote_format(candidates).read(answer)
        return (value["vote"], float(value["confidence"])) if value is not None else None
    m = re.search(r"VOTE:\s*(\w+)\s+CONFIDENCE:\s*([0-9.]+)", answer)
    if not m or m.group(1) not in candidates:
        return None
    conf = min(1.0, max(0.0, float(m.group(2)))) if re.fullmatch(r"\d+(\.\d+)?", m.group(2)) else 0.0
    return m.group(1), conf


@dataclass
class ModelReviewer:
    """A quality reviewer backed by one discovered model. Where the endpoint enforces a schema it votes
    ``{"vote": ..., "confidence": ...}`` under it, else it answers ``VOTE: x CONFIDENCE: y`` in free text;
    an answer that names no candidate is an ``unparseable`` vote (recorded with what the model said, adding
    nothing), a failed call a ``call_failed`` vote."""

    name: str
    role: str
    model: str
    gateway: ModelGateway
    chain_text: str

    def vote(self, ctx: RoundContext) -> Vote:
        tally = ", ".join(f"{k}={v:.3f}" for k, v in ctx.scores.items())
        try:
            constraint = self.gateway.constraint_for(self.model)
        except Exception as exc:  # noqa: BLE001 - the probe failed: the vote is a failed call, recorded as such
            return Vote(agent=self.name, role=self.role, candidate=None, confidence=0.0, status="call_failed",
                        rationale=f"constraint probe failed: {type(exc).__name__}")
        ask = (f"Answer with the JSON object {{\"vote\": <{'|'.join(ctx.candidates)}>, \"confidence\": <0..1>}}."
               if constraint != "none" else
               f"Answer with one line 'VOTE: <{'|'.join(ctx.candidates)}> CONFIDENCE: <0..1>', then one reason.")
        messages = [{"role": "user", "content": (
            f"Round {ctx.round} of a quality consensus on a 7-step review of fastapi/fastapi 0.115.0. "
            f"Current scores after evaporation: {tally}.\nFinal chain output:\n{self.chain_text}\n\n{ask}")}]
        fmt = vote_format(ctx.candidates) if constraint != "none" else None
        try:
            answer = self.gateway.chat(self.model, messages, max_tokens=fmt.max_tokens if fmt else 120,
                                       answer_format=fmt, constraint=constraint if fmt else None).text
        except Exception as exc:  # noqa: BLE001 - a failed call is a vote with no candidate, recorded as such
            return Vote(agent=self.name, role=self.role, candidate=None, confidence=0.0, status="call_failed",
                        rationale=f"call failed: {type(exc).__name__}", constraint=constraint)
        parsed = read_vote(answer, ctx.candidates, constraint)
        if parsed is None:
            return Vote(agent=self.name, role=self.role, candidate=None, confidence=0.0, status="unparseable",
                        rationale="unparseable vote: " + " ".join(answer.split())[:TEXT_HEAD_CHARS],
                        constraint=constraint)
        candidate, conf = parsed
        return Vote(agent=self.name, role=self.role, candidate=candidate, confidence=conf,
                    rationale=(answer.splitlines()[-1] if answer.strip() else "")[:200], constraint=constraint)


# -- evidence and evaluation ---------------------------------------------------------------------


class StepRow(Format):
    task_id: int
    status: str
    payload: dict[str, Any]
    output: dict[str, Any]
    pheromone: float
    score: float | None


class S07Evidence(Format):
    mode: str
    store_kind: str
    repository: str
    version: str
    source_files: tuple[str, ...]
    excerpts_verified: bool
    sdist_verification: dict[str, Any] | None = None
    discovery_performed: bool
    discovered_models: tuple[str, ...]
    chosen_models: tuple[str, ...] = Field(description="the distinct models, in discovery order")
    model_identities: tuple[ModelIdentity, ...] = Field(
        default=(), description="every probed model: answered, fingerprint, which model it is the same as")
    steps: tuple[StepRow, ...]
    redis_pheromones: dict[int, float] | None
    redis_stream_length: int | None = Field(description="ledger events carried by the Redis stream")
    ledger_events: int
    convergence: dict[str, Any] | None
    blob_exists: bool
    consensus: ConsensusResult
    local_project: str = LOCAL_PROJECT


def evaluate_s07(ev: S07Evidence) -> ScenarioResult:
    """The fourteen checks of seed section 8, each from the stored evidence."""
    steps = sorted(ev.steps, key=lambda s: s.payload.get("step", 0))
    by_step = {s.payload.get("step"): s for s in steps}
    texts = {k: str(s.output.get("text", "")) for k, s in by_step.items()}
    used = [s.output.get("model") for s in steps]
    checks: list[Check] = []

    def add(name: str, passed: bool, condition: str, **evidence: Any) -> None:
        checks.append(Check(name=name, passed=bool(passed), condition=condition, evidence=evidence))

    same = {i.model: i.same_model_as or i.model for i in ev.model_identities if i.answered}
    distinct_used = sorted({same[m] for m in used if m in same})
    add("three_distinct_models_from_discovery", len(distinct_used) >= 3 and set(used) <= set(ev.discovered_models),
        "the steps used >= 3 distinct models listed by discovery (aliases of one model, and models the fingerprint "
        "probe cannot tell apart, count once)", distinct_models=len(distinct_used), distinct_models_used=distinct_used,
        models_used=used, discovered=list(ev.discovered_models),
        identities={i.model: {"same_model_as": i.same_model_as, "relation": i.relation, "answered": i.answered,
                              "reproducible": i.reproducible, "prompt_tokens": i.prompt_tokens}
                    for i in ev.model_identities})
    done = [s for s in steps if s.status == "done"]
    add("seven_chain_steps_all_done_in_pg", len(steps) == STEPS and len(done) == STEPS
        and sorted(by_step) == list(range(1, STEPS + 1)), f"{STEPS} chain steps (1..{STEPS}) in the store, all done",
        store=ev.store_kind, steps=len(steps), done=len(done))
    links = {k: step_marker(k) in texts.get(k, "") and step_marker(k - 1) in texts.get(k, "")
             for k in range(1, STEPS + 1)}
    add("step_markers_and_previous_links", all(links.values()), "every step k names STEP-0k and STEP-0(k-1)",
        per_step=links)
    gates: dict[int, bool] = {}
    quality: dict[int, dict[str, Any]] = {}
    for k, s in by_step.items():  # recomputed from the stored text, and compared with what was stored
        a = assess_output_quality(s07_quality_checks(texts[k], step=k, repository=ev.repository,
                                                     pinned_ref=ev.version, local_project=ev.local_project,
                                                     source_files=ev.source_files))
        stored = bool(s.output.get("quality", {}).get("quality_pass"))
        gates[k] = a.quality_pass and stored
        quality[k] = {"Q": a.Q, "passed": a.passed, "total": a.total, "critical_failed": list(a.critical_failed),
                      "failed": [c.name for c in a.checks if not c.passed], "stored_quality_pass": stored,
                      "task_score": s.score, "model": s.output.get("model"),
                      "text_head": " ".join(texts[k].split())[:TEXT_HEAD_CHARS]}
    add("all_outputs_pass_quality_gate", len(gates) == STEPS and all(gates.values()),
        f"every step: Q >= {QUALITY_THRESHOLD} and every critical check passed (recomputed from the stored text, "
        "and as stored)", per_step=gates, threshold=QUALITY_THRESHOLD, quality=quality)
    cursor = {}
    for k in range(2, STEPS + 1):
        s, prev = by_step.get(k), by_step.get(k - 1)
        cursor[k] = bool(s and prev and s.payload.get("previous_task_id") == prev.task_id
                         and s.output.get("previous_text_sha256") == hashlib.sha256(texts[k - 1].encode()).hexdigest())
    add("shared_state_chain_cursor_and_summaries", len(cursor) == STEPS - 1 and all(cursor.values()),
        "every step k >= 2 points at step k-1's task and was given its text (sha256)", per_step=cursor)
    redis = ev.redis_pheromones
    add("pheromone_scores_pg_and_redis", bool(steps) and redis is not None
        and all(s.pheromone > 0 and redis.get(s.task_id, 0.0) > 0 for s in steps),
        "every step task has P_t > 0 in the store and in the Redis mirror",
        store_pheromones={s.task_id: s.pheromone for s in steps},
        redis_pheromones=redis if redis is not None else "no Redis mirror attached to this run")
    add("shared_state_converged", ev.convergence is not None, "the run recorded a convergence",
        convergence={k: v for k, v in (ev.convergence or {}).items() if k != "accepted_output"} or None)
    acc = float(ev.convergence["accepted_score"]) if ev.convergence else None
    add("convergence_pg_and_blob", ev.convergence is not None and len(done) == STEPS and acc is not None
        and at_least(acc, MIN_ACCEPTED_SCORE) and ev.blob_exists,
        f"a convergence exists, completed_tasks = {STEPS}, accepted_score >= {MIN_ACCEPTED_SCORE}, "
        "its blob artifact is verified", completed_tasks=len(done), accepted_score=acc,
        min_accepted_score=MIN_ACCEPTED_SCORE, blob_exists=ev.blob_exists)
    add("redis_stream_event_volume", ev.redis_stream_length is not None and ev.ledger_events > 0
        and ev.redis_stream_length >= ev.ledger_events, "the Redis stream carries every ledger event (> 0)",
        stream_events=ev.redis_stream_length,
        ledger_events=ev.ledger_events)
    cited = sorted({f for t in texts.values() for f in ev.source_files if f in t})
    sdist = ev.sdist_verification
    add("contains_external_fastapi_code_review_material", ev.excerpts_verified and len(cited) >= 5
        and (sdist is None or bool(sdist.get("verified"))),
        "the bundled fastapi excerpts verify, the steps cite >= 5 of its files (and --sdist verifies when given)",
        files_cited=cited, excerpts_verified=ev.excerpts_verified,
        sdist=sdist if sdist is not None else "not supplied (the bundled excerpts' sha256 were verified)")
    c = ev.consensus
    add("multi_round_quality_consensus_accepts_chain", c.converged and c.accepted_candidate == "accept_external_chain"
        and c.round_count >= 2,
        f"the quality consensus converged (leader_share >= {c.threshold} and margin >= {c.min_margin}) on "
        "accept_external_chain with round_count >= 2",
        converged=c.converged, accepted_candidate=c.accepted_candidate, round_count=c.round_count,
        **consensus_evidence(c))
    final_files = [f for f in ev.source_files if f in texts.get(STEPS, "")]
    add("final_output_references_external_files", len(final_files) >= 2,
        f"the final step ({step_marker(STEPS)}) names >= 2 reviewed files", files=final_files)
    add("keeps_model_discovery_not_fixed_model", ev.discovery_performed and bool(ev.chosen_models)
        and set(ev.chosen_models) <= set(ev.discovered_models) and set(used) <= set(ev.chosen_models),
        "discovery ran and the models used are among those chosen from it",
        discovery_performed=ev.discovery_performed, discovered=list(ev.discovered_models),
        chosen=list(ev.chosen_models), used=sorted({str(m) for m in used}))
    drift = [k for k, t in texts.items() if ev.local_project.lower() in t.lower()]
    add("external_github_target_not_local_project", ev.repository == "fastapi/fastapi" and not drift
        and ev.repository.split("/")[-1] != ev.local_project,
        f"the target is fastapi/fastapi and no step names the local project ({ev.local_project})",
        repository=ev.repository, steps_naming_local=drift)
    return ScenarioResult(scenario="S07", mode=ev.mode, passed=all_passed(checks), checks=tuple(checks),
                          consensus=c)


# -- the run -------------------------------------------------------------------------------------


def run_s07(gateway: ModelGateway, store: str, *, mode: str, redis_url: str | None = None,
            blob_root: str | Path = "swarm-blobs", prefix: str | None = None,
            sdist: Path | None = None) -> tuple[ScenarioResult, S07Evidence]:
    """Run the S07 chain and consensus through ``gateway`` on ``store``; evaluate from what was stored.
    With ``sdist`` (the downloaded archive), the bundled excerpts are also checked against it."""
    source, excerpts = load_pinned_source()
    sdist_check = verify_sdist(sdist, source, excerpts) if sdist is not None else None
    prefix = prefix or f"accept-{uuid.uuid4().hex[:8]}"
    run_id = f"{prefix}-s07"
    discovered = gateway.discover()
    selection = gateway.identify_models(3)
    models = selection.distinct_models
    blobs = BlobStore(blob_root)
    with open_pool(store, run_id, redis_url=redis_url) as pool:
        pool.create_run()
        first = source.files[0]
        pool.add_tasks([TaskSpec(capability=STEP_CAPABILITY, max_attempts=1, payload=StepPayload(
            step=1, path=first.path, excerpt_sha256=first.excerpt_sha256).model_dump())])
        agents = [Agent(f"s07-agent-{i}", [STEP_CAPABILITY], _step_handler(pool, gateway, source, excerpts, models, i))
                  for i in range(3)]
        run_agents(pool, agents)
        result = pool.converge(STEP_CAPABILITY)
        chain_text = ""
        blob = None
        if result is not None:
            chain_text = orjson.loads(result.accepted_output).get("text", "")
            blob = blobs.put_json({"run_id": run_id, "repository": source.repository, "version": source.version,
                                   **result.model_dump()})
            pool.record_convergence("run", result, blob)
        roles = list(ROLE_WEIGHTS)
        reviewers = [PooledReviewer(ModelReviewer(f"s07-reviewer-{i}", role, models[i % len(models)], gateway,
                                                  chain_text), pool, CONSENSUS_KIND) for i, role in enumerate(roles)]
        ConsensusSwarm(CONSENSUS_CANDIDATES, S07_QUALITY_CONSENSUS, ROLE_WEIGHTS, min_rounds=S07_MIN_ROUNDS,
                       max_rounds=4).run(reviewers, chain_text)
        ev = collect_s07_evidence(pool, source, mode=mode, discovered=discovered, chosen=models, blobs=blobs)
    ev = ev.model_copy(update={"sdist_verification": sdist_check, "model_identities": selection.identities})
    return evaluate_s07(ev), ev


def _stream_event_count(mirror) -> int:
    """Ledger events carried by the run's Redis stream (an entry may carry several events)."""
    counter = getattr(mirror, "stream_event_count", None)
    return int(counter()) if counter is not None else int(mirror.stream_length())


def blob_holds_convergence(blobs: BlobStore, conv: dict[str, Any] | None) -> bool:
    """``blob_artifact_exists`` (seed section 8) read as evidence: the convergence names a blob, the
    blob's bytes match its sha256, and it holds the accepted task, score and output the store recorded."""
    if not conv or not conv.get("blob_sha256"):
        return False
    try:
        artifact = blobs.get_json(conv["blob_sha256"])
    except (BadInput, orjson.JSONDecodeError):
        return False
    return isinstance(artifact, dict) and all(
        artifact.get(k) == conv[k] for k in ("accepted_task_id", "accepted_score", "accepted_output"))


def collect_s07_evidence(pool, source: PinnedSource, *, mode: str, discovered: Sequence[str],
                         chosen: Sequence[str], blobs: BlobStore) -> S07Evidence:
    """Read S07's evidence back from the store, its Redis mirror and the blob store."""
    steps = tuple(StepRow(task_id=t.task_id, status=t.status.value, payload=orjson.loads(t.payload),
                          output=orjson.loads(t.output) if t.output else {}, pheromone=t.pheromone, score=t.score)
                  for t in pool.tasks() if t.capability == STEP_CAPABILITY)
    conv = pool.convergences().get("run")
    mirror = pool.mirror
    events = audit_pool(pool).events
    try:
        load_pinned_source()
        verified = True
    except BadInput:
        verified = False
    return S07Evidence(
        mode=mode, store_kind=pool.scheme or "sqlite", repository=source.repository, version=source.version,
        source_files=tuple(f.path for f in source.files), excerpts_verified=verified, discovery_performed=bool(discovered),
        discovered_models=tuple(discovered), chosen_models=tuple(chosen), steps=steps,
        redis_pheromones=mirror.pheromones(STEP_CAPABILITY) if mirror is not None else None,
        redis_stream_length=_stream_event_count(mirror) if mirror is not None else None, ledger_events=events,
        convergence=conv, blob_exists=blob_holds_convergence(blobs, conv),
        consensus=consensus_from_ledger(pool, CONSENSUS_KIND, candidates=CONSENSUS_CANDIDATES,
                                        params=S07_QUALITY_CONSENSUS, role_weights=ROLE_WEIGHTS,
                                        min_rounds=S07_MIN_ROUNDS),
    )
