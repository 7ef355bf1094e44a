"""A small agent-style inspect_ai task run for real with the offline ``mockllm/model`` provider.

``python agent_eval.py LOG_DIR VARIANT`` runs one evaluation and leaves its ``.eval`` log in LOG_DIR:

- ``agent``: six cases x 3 epochs, one sample at a time (so the order is epoch by epoch, in dataset
  order). The "agent" asks the model, which answers by a fixed table, and "runs its tests": the scorer
  ``answer`` grades the answer (C/I) and records ``tests_passed``; the scorer ``llm_check`` asks the
  model to grade (a model-graded scorer). INFRA's epoch 2 cannot start its sandbox (an infrastructure
  error), BROKE's epoch 1 gives up (the agent's error), SLOW hits its 1-second time limit every
  epoch (a scoped ``time_limit``, so no other sample can hit it on a busy machine), and at CUT's epoch 3 the run is interrupted with SIGINT, exactly as Ctrl-C does: the log is
  ``cancelled`` and CUT has no third repetition.
- ``nosamples``: one case, written with ``log_samples=False`` (``--no-log-samples``).
- ``crash``: the process dies during the first sample: the log stays ``started``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import time_limit

#: what the model answers, by case and epoch: "<answer> tests:<n>" (the target is 42)
ANSWERS = {
    "GOOD": {1: "42 tests:3", 2: "42 tests:3", 3: "42 tests:3"},
    "FLAKY": {1: "42 tests:3", 2: "41 tests:3", 3: "41 tests:1"},
    "INFRA": {1: "42 tests:3", 2: "42 tests:3", 3: "42 tests:3"},
    "SLOW": {1: "42 tests:3", 2: "42 tests:3", 3: "42 tests:3"},
    "BROKE": {1: "42 tests:3", 2: "42 tests:3", 3: "42 tests:3"},
    "CUT": {1: "42 tests:3", 2: "42 tests:3", 3: "42 tests:3"},
}


class SandboxStartError(RuntimeError):
    """The sample's sandbox could not start (an infrastructure failure)."""


class AgentGaveUp(RuntimeError):
    """The agent stopped without a result (the agent's own failure)."""


@solver
def agent():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        case, epoch = str(state.sample_id), state.epoch
        if case == "INFRA" and epoch == 2:
            raise SandboxStartError("sandbox container failed to start: image pull timed out")
        if case == "BROKE" and epoch == 1:
            raise AgentGaveUp("the agent gave up after its plan failed")
        if case == "SLOW":
            with time_limit(1):  # this sample's 1-second time limit stops it first
                await asyncio.sleep(4)
        if case == "CUT" and epoch == 3:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C
            await asyncio.sleep(60)  # cancelled by the SIGINT long before
        state.messages.append(ChatMessageUser(content=f"case={case} epoch={epoch}: solve it"))
        return await generate(state)

    return solve


def model_outputs(messages, tools, tool_choice, config) -> ModelOutput:
    text = messages[-1].text
    if text.startswith("GRADE"):
        content = "GRADE: C"
    else:
        fields = dict(part.split("=") for part in text.split(":")[0].split())
        content = ANSWERS[fields["case"]][int(fields["epoch"])]
    out = ModelOutput.from_content(model="mockllm/model", content=content)
    out.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)  # no tokenizer download
    return out


@scorer(metrics=[accuracy()])
def answer():
    async def score(state: TaskState, target: Target) -> Score:
        words = state.output.completion.split()
        tests = int(words[1].split(":")[1]) if len(words) > 1 else 0
        ok = bool(words) and words[0] == target.text
        return Score(value=CORRECT if ok else INCORRECT, answer=words[0] if words else "",
                     metadata={"tests_passed": tests, "ratio": float("nan")})

    return score


@scorer(metrics=[accuracy()])
def llm_check():
    async def score(state: TaskState, target: Target) -> Score:
        graded = await get_model().generate(f"GRADE the answer {state.output.completion!r} against {target.text}")
        return Score(value=CORRECT if "GRADE: C" in graded.completion else INCORRECT)

    return score


def main(log_dir: str, variant: str) -> None:
    model = get_model("mockllm/model", custom_outputs=model_outputs)
    cases = list(ANSWERS) if variant == "agent" else ["GOOD"]
    dataset = MemoryDataset([Sample(id=c, input=f"Task {c}: fix the failing build and report the answer", target="42",
                                    metadata={"notes": f"workspace of {c}"}) for c in cases])
    if variant == "crash":
        @solver
        def crash():
            async def solve(state: TaskState, generate: Generate) -> TaskState:
                os._exit(3)

            return solve

        task = Task(dataset=dataset, solver=crash(), scorer=answer(), name="agent_crash")
        inspect_eval(task, model=model, log_dir=log_dir, display="none")
        return
    task = Task(dataset=dataset, solver=agent(), scorer=[answer(), llm_check()], epochs=3 if variant == "agent" else 1,
                name=f"agent_{variant}")
    inspect_eval(task, model=model, log_dir=log_dir, display="none", max_samples=1, fail_on_error=False,
                 log_samples=variant != "nosamples")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
