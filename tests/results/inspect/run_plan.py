"""Run a small inspect_ai task for real, once per "model", with the offline ``mockllm`` provider.

``python run_plan.py PLANS.json LOG_DIR``: PLANS is a list of plans, each run in turn into
``LOG_DIR/<its index>``. A plan holds ``samples`` (``id``, ``input``, ``target``,
``topic``), ``epochs``, optionally ``reducer`` (an inspect_ai epoch reducer name), ``task`` (its
name), ``fail_on_error`` and ``models``: ``{name: {"wrong": {id: n}, "errors": {id: n}}}``. For each
sample, a model's first ``errors[id]`` calls raise (the sample x epoch errors), its next
``wrong[id]`` calls answer wrongly and every other call answers the target, so the multiset of a
sample's epoch outcomes is fixed whatever order inspect_ai runs the epochs in. Every output sets
``usage`` (mockllm then needs no tokenizer download). Scorers: ``match`` (C / I) and ``graded``, a
scorer whose value is a dict (``right``: a boolean, ``length``: the answer's length).

What else a log can record (issue 35), each optional in a plan:

- ``solver_fails_once``: ``{model: [id, ...]}``: the solver raises the first time it runs each listed
  sample (every epoch's first attempt), and ``retry_on_error`` (inspect_ai's option) retries it: the
  sample records the retried error (``error_retries``) and the retry's result;
- ``reducer``: ``"second_best"`` is a custom epoch reducer defined here (inspect_ai's
  ``@score_reducer``), any other name one inspect_ai ships;
- ``edits``: ``[{"model", "sample", "epoch", "scorer", "value", "author", "reason"}]``: after the run, each
  score is edited with inspect_ai's own ``edit_score`` (author and reason recorded) and the log rewritten;
- ``eval_set``: run with inspect_ai's ``eval_set`` (``retry_attempts`` of it, ``fail_on_error`` as set)
  into ``LOG_DIR/<index>``, so a model that errors on its first call is retried by the eval set: the
  folder holds the failed attempt's log and the successful retry's.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from inspect_ai import Epochs, Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, match, mean, score_reducer, scorer, value_to_float
from inspect_ai.solver import Generate, TaskState, generate, solver


@score_reducer(name="second_best")
def second_best():
    """A custom epoch reducer (not one inspect_ai ships): the second highest value of the epochs."""

    to_float = value_to_float()

    def second(values: list) -> float:
        ranked = sorted((to_float(v) for v in values), reverse=True)
        return ranked[1] if len(ranked) > 1 else ranked[0]

    def reduce(scores: list[Score]) -> Score:
        if isinstance(scores[0].value, dict):
            return Score(value={k: second([s.value[k] for s in scores]) for k in scores[0].value})
        return Score(value=second([s.value for s in scores]))

    return reduce


@solver
def fails_once(ids: dict[str, list[str]]):
    """Raise the first time each listed sample x epoch runs for a model (``{model: [id, ...]}``; inspect_ai's
    retry_on_error then retries it)."""
    seen: set[tuple[str, str, int]] = set()

    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        name = str(state.model).rsplit("/", 1)[-1]
        key = (name, str(state.sample_id), state.epoch)
        if str(state.sample_id) in ids.get(name, ()) and key not in seen:
            seen.add(key)
            raise RuntimeError(f"the sandbox of {state.sample_id} epoch {state.epoch} did not start")
        return state

    return solve


@scorer(metrics={"right": [accuracy()], "length": [mean()]})
def graded():
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.strip()
        return Score(value={"right": answer == target.text, "length": len(answer)}, answer=answer)

    return score


def model(name: str, spec: dict, inputs: dict[str, str], targets: dict[str, str]):
    calls: Counter[str] = Counter()

    def outputs(messages, tools, tool_choice, config) -> ModelOutput:
        sid = inputs[messages[-1].text]
        calls[sid] += 1
        n = calls[sid]
        errors = spec.get("errors", {}).get(sid, 0)
        if n <= errors:
            raise RuntimeError(f"the endpoint of {name} answered HTTP 503 for {sid}")
        wrong = n <= errors + spec.get("wrong", {}).get(sid, 0)
        out = ModelOutput.from_content(model=name, content="nonsense" if wrong else targets[sid])
        out.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
        return out

    return get_model(f"mockllm/{name}", custom_outputs=outputs)


def task_of(plan: dict) -> Task:
    samples = [Sample(id=s["id"], input=s["input"], target=s["target"], metadata={"topic": s["topic"]})
               for s in plan["samples"]]
    reducer = plan.get("reducer")
    epochs = Epochs(plan["epochs"], second_best() if reducer == "second_best" else reducer) if reducer else \
        plan["epochs"]
    failing = plan.get("solver_fails_once")
    solvers = [fails_once(failing), generate()] if failing else [generate()]
    return Task(dataset=samples, solver=solvers, scorer=[match(), graded()], epochs=epochs,
                name=plan.get("task", "quiz"))


def run(plan: dict, log_dir: str) -> None:
    inputs = {s["input"]: s["id"] for s in plan["samples"]}
    targets = {s["id"]: s["target"] for s in plan["samples"]}
    options = {"log_dir": log_dir, "display": "none", "max_retries": 0,
               "fail_on_error": plan.get("fail_on_error", False)}
    if plan.get("retry_on_error"):
        options["retry_on_error"] = plan["retry_on_error"]
    models = [model(name, spec, inputs, targets) for name, spec in plan["models"].items()]
    if plan.get("eval_set"):
        from inspect_ai import eval_set

        eval_set(task_of(plan), model=models, retry_attempts=plan["eval_set"], retry_wait=0.1, retry_cleanup=False,
                 **options)
        return
    inspect_eval(task_of(plan), model=models, **options)
    for edit in plan.get("edits") or ():
        edit_log(log_dir, edit)


def edit_log(log_dir: str, edit: dict) -> None:
    """Edit one score of one model's log with inspect_ai's own edit_score (author and reason recorded)."""
    from pathlib import Path

    from inspect_ai.log import ProvenanceData, edit_score, read_eval_log, write_eval_log
    from inspect_ai.scorer import ScoreEdit

    (path,) = [p for p in Path(log_dir).glob("*.eval")
               if read_eval_log(str(p), header_only=True).eval.model == f"mockllm/{edit['model']}"]
    log = read_eval_log(str(path))
    edit_score(log, edit["sample"], edit["scorer"], ScoreEdit(
        value=edit["value"], provenance=ProvenanceData(author=edit["author"], reason=edit["reason"])),
        epoch=edit["epoch"])
    write_eval_log(log, str(path))


def main(plans_path: str, log_dir: str) -> None:
    for k, plan in enumerate(json.loads(open(plans_path, encoding="utf-8").read())):
        run(plan, f"{log_dir}/{k}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
