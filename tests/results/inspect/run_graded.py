"""Run a model-graded inspect_ai task for real: ``model_graded_qa`` with a grader of known errors (mockllm).

``python run_graded.py PLAN.json LOG_DIR``: PLAN holds ``samples`` (``id``, ``input``, ``target``) and
``models``: ``{name: {"wrong": [ids answered wrongly], "flipped": [ids the grader grades the other way]}}``. Each
model answers the target (or ``nonsense`` for its wrong ids); the grader, a ``mockllm`` model given to
``model_graded_qa(model=...)``, reads the submission from inspect_ai's grading prompt and answers ``GRADE: C``
when it is the target, ``GRADE: I`` otherwise, except on the model's ``flipped`` ids, where it answers the
other grade. So the grader's errors on every sample are known in advance. Every output sets ``usage``
(mockllm then needs no tokenizer download).
"""

from __future__ import annotations

import json
import re
import sys

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import generate


def _out(name: str, text: str) -> ModelOutput:
    out = ModelOutput.from_content(model=name, content=text)
    out.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
    return out


def run(plan: dict, log_dir: str) -> None:
    samples = [Sample(id=s["id"], input=s["input"], target=s["target"]) for s in plan["samples"]]
    by_input = {s["input"]: s for s in plan["samples"]}
    for name, spec in plan["models"].items():
        wrong, flipped = set(spec.get("wrong", [])), set(spec.get("flipped", []))

        def answer(messages, tools, tool_choice, config, wrong=wrong, name=name) -> ModelOutput:
            s = by_input[messages[-1].text]
            return _out(name, "nonsense" if s["id"] in wrong else s["target"])

        def grade(messages, tools, tool_choice, config, flipped=flipped) -> ModelOutput:
            prompt = messages[-1].text
            s = next(s for s in plan["samples"] if s["input"] in prompt)
            submission = re.search(r"\[Submission\]:\s*(.*?)\s*\*{3}", prompt, re.S)
            right = submission is not None and submission.group(1).strip() == s["target"]
            if s["id"] in flipped:
                right = not right
            return _out("grader", "GRADE: C" if right else "GRADE: I")

        grader = get_model("mockllm/grader", custom_outputs=grade, memoize=False)
        task = Task(dataset=samples, solver=generate(), scorer=model_graded_qa(model=grader), name="graded")
        inspect_eval(task, model=get_model(f"mockllm/{name}", custom_outputs=answer, memoize=False), log_dir=log_dir,
                     display="none", max_retries=0)


if __name__ == "__main__":
    run(json.loads(open(sys.argv[1], encoding="utf-8").read()), sys.argv[2])
