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
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from inspect_ai import Epochs, Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, match, mean, scorer
from inspect_ai.solver import TaskState, generate


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


def run(plan: dict, log_dir: str) -> None:
    samples = [Sample(id=s["id"], input=s["input"], target=s["target"], metadata={"topic": s["topic"]})
               for s in plan["samples"]]
    inputs = {s["input"]: s["id"] for s in plan["samples"]}
    targets = {s["id"]: s["target"] for s in plan["samples"]}
    epochs = Epochs(plan["epochs"], plan["reducer"]) if plan.get("reducer") else plan["epochs"]
    task = Task(dataset=samples, solver=generate(), scorer=[match(), graded()], epochs=epochs,
                name=plan.get("task", "quiz"))
    models = [model(name, spec, inputs, targets) for name, spec in plan["models"].items()]
    inspect_eval(task, model=models, log_dir=log_dir, display="none", max_retries=0,
                 fail_on_error=plan.get("fail_on_error", False))


def main(plans_path: str, log_dir: str) -> None:
    for k, plan in enumerate(json.loads(open(plans_path, encoding="utf-8").read())):
        run(plan, f"{log_dir}/{k}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
