"""Run benchscore's rxn task for real with the offline ``mockllm/model`` provider and answers we choose.

``python run_rxn.py TASK DATASET ANSWERS.json LOG_DIR [EPOCHS [fail]]``: ANSWERS maps a rendered prompt to
the answer text the model gives to it; a prompt mapped to null makes the model call fail (the sample
errors; with ``fail``, inspect_ai's ``fail_on_error`` stops the run there: status ``error``); a prompt mapped
to ``{"fail_once": TEXT}`` makes the first call fail and later ones answer TEXT (the run then sets
inspect_ai's ``retry_on_error``: the sample is retried and its retry's answer recorded). The log is
left in LOG_DIR. The outputs set ``usage``: mockllm downloads no tokenizer. ``python run_rxn.py arith LOG_DIR`` runs a task that is no rxn task.
"""

from __future__ import annotations

import json
import sys

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from benchscore.rxn.inspect import rxn_fib, rxn_mc


def main(task: str, dataset: str, answers_path: str, log_dir: str, epochs: int = 1, fail: bool = False) -> None:
    answers = json.loads(open(answers_path, encoding="utf-8").read())
    failed_once: set[str] = set()

    def outputs(messages, tools, tool_choice, config) -> ModelOutput:
        prompt = messages[-1].text
        text = answers[prompt]
        if isinstance(text, dict):
            if prompt not in failed_once:
                failed_once.add(prompt)
                raise RuntimeError("the model endpoint answered HTTP 503 once")
            text = text["fail_once"]
        if text is None:
            raise RuntimeError("the model endpoint answered HTTP 503 after every retry")
        out = ModelOutput.from_content(model="mockllm/model", content=text)
        out.usage = ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105)  # no tokenizer download
        return out

    make = rxn_mc if task == "rxn_mc" else rxn_fib
    retry = {"retry_on_error": 1} if any(isinstance(a, dict) for a in answers.values()) else {}
    inspect_eval(make(dataset=dataset), model=get_model("mockllm/model", custom_outputs=outputs), log_dir=log_dir,
                 display="none", fail_on_error=fail, epochs=epochs, max_retries=0, max_samples=1 if fail else None,
                 **retry)


def arith(log_dir: str) -> None:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match

    def out(*_) -> ModelOutput:
        o = ModelOutput.from_content(model="mockllm/model", content="1")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return o

    inspect_eval(Task(dataset=[Sample(id="q", input="2-1?", target="1")], scorer=match(), name="arith"),
                 model=get_model("mockllm/model", custom_outputs=out), log_dir=log_dir, display="none")


if __name__ == "__main__":
    if sys.argv[1] == "arith":
        arith(sys.argv[2])
    else:
        main(*sys.argv[1:5], *(int(a) for a in sys.argv[5:6]), *(a == "fail" for a in sys.argv[6:7]))
