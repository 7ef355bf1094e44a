"""An agent task of its own (react agent, a tool, an approver), run for real with the offline ``mockllm/model``.

The model's outputs set ``usage``, so mockllm never downloads a tokenizer (docs/inspect.md). Run it as
inspect_ai's users do, or as a script (then the classes below live in ``__main__``)::

    inspect eval tests/mira/inspect/ops_task.py@ops -T cases=ok,giveup --retry-on-error 1 --log-dir DIR
    python tests/mira/inspect/ops_task.py DIR ok,giveup [--retry-on-error N] [--epochs N] [--limit N] [--fail-on-error]

The sample ids are the cases (``-T cases=``), 3 epochs by default. What each case does:

- ``ok``: answers right every epoch (``42 tests:3``).
- ``giveup``: the agent raises :class:`AgentGaveUp` (a class of this file) on the first attempt of
  epoch 1 only: with ``--retry-on-error 1`` the retry answers right.
- ``boot``: :class:`SandboxBootError` (this file) on every attempt of epoch 2.
- ``docker``: ``RuntimeError("docker compose up failed\\nstderr: network sandbox_default not found")``
  on every attempt of epoch 2, as inspect_ai's docker sandbox raises ``RuntimeError(result.stderr)``.
- ``daemon``: on the first attempt of epoch 3 only, ``RuntimeError("Failed to start docker
  services:\\nError response from daemon: ...")``: with a retry, the retry answers right.
- ``group``: on every attempt of epoch 1, two tasks of an anyio task group fail at once (an
  ``ExceptionGroup`` of a multi-line ``RuntimeError`` and a :class:`SandboxBootError`).
- ``approval``: the agent's first tool call (``run_shell("rm -rf build")``) is rejected by the
  ``reviewer`` approver; every other tool call is approved (``reviewer`` for ``run_shell``, ``auto``
  for ``submit``).
- ``HumanEval/0``: a sample id with ``/`` (answers right).
- ``wrong``: answers ``41`` every epoch.
- ``cut``: Ctrl-C (SIGINT) at epoch 1: the eval is cancelled.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

import anyio
from inspect_ai import Task, task
from inspect_ai import eval as inspect_eval
from inspect_ai.agent import react
from inspect_ai.approval import Approval, ApprovalPolicy, approver, auto_approver
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import tool

#: attempts seen so far, by (sample id, epoch): a retry runs in the same process
ATTEMPTS: dict[tuple[str, int], int] = {}


class AgentGaveUp(RuntimeError):
    """The agent stopped without a result (the agent's own failure)."""


class SandboxBootError(RuntimeError):
    """The sample's sandbox never booted (an infrastructure failure)."""


@tool
def run_shell():
    async def execute(cmd: str) -> str:
        """Run a shell command in the workspace.

        Args:
            cmd: The command to run.
        """
        return f"ran {cmd}: ok"

    return execute


@approver(name="reviewer")
def reviewer():
    async def approve(message, call, view, history):
        if str(call.arguments.get("cmd", "")).startswith("rm"):
            return Approval(decision="reject", explanation="destructive command")
        return Approval(decision="approve", explanation="safe")

    return approve


@solver
def trouble():
    """Fails as the case says (see the module docstring), before the agent runs."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        case, epoch = str(state.sample_id), state.epoch
        key = (case, epoch)
        ATTEMPTS[key] = ATTEMPTS.get(key, 0) + 1
        first = ATTEMPTS[key] == 1
        if case == "giveup" and epoch == 1 and first:
            raise AgentGaveUp("the agent gave up after its plan failed")
        if case == "boot" and epoch == 2:
            raise SandboxBootError("sandbox never booted: container exited (137)")
        if case == "docker" and epoch == 2:
            raise RuntimeError("docker compose up failed\nstderr: network sandbox_default not found")
        if case == "daemon" and epoch == 3 and first:
            raise RuntimeError("Failed to start docker services:\nError response from daemon: Conflict. The "
                               "container name \"/sandbox-default-1\" is already in use")
        if case == "group" and epoch == 1:
            async def compose() -> None:
                raise RuntimeError("docker compose up failed\nstderr: port is already allocated")

            async def boot() -> None:
                raise SandboxBootError("sandbox never booted: no space left on device")

            async with anyio.create_task_group() as tg:
                tg.start_soon(compose)
                tg.start_soon(boot)
        if case == "cut" and epoch == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C
            await anyio.sleep(60)
        return state

    return solve


def outputs(messages, tools, tool_choice, config) -> ModelOutput:
    """The model: the approval case calls run_shell twice before it submits; every other case submits."""
    user = next((m.text for m in messages if m.role == "user"), "")
    case = user.split()[1].rstrip(":") if len(user.split()) > 1 else ""
    tool_results = sum(1 for m in messages if m.role == "tool")
    if case == "approval" and tool_results == 0:
        out = ModelOutput.for_tool_call("mockllm/model", "run_shell", {"cmd": "rm -rf build"})
    elif case == "approval" and tool_results == 1:
        out = ModelOutput.for_tool_call("mockllm/model", "run_shell", {"cmd": "make test"})
    else:
        out = ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "41 tests:1" if case == "wrong"
                                                                    else "42 tests:3"})
    out.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)  # no tokenizer download
    return out


@scorer(metrics=[accuracy()])
def answer():
    async def score(state: TaskState, target: Target) -> Score:
        words = state.output.completion.strip().splitlines()[-1].split() if state.output.completion.strip() else []
        tests = int(words[1].split(":")[1]) if len(words) > 1 and ":" in words[1] else 0
        ok = bool(words) and words[0] == target.text
        return Score(value=CORRECT if ok else INCORRECT, answer=words[0] if words else "",
                     metadata={"tests_passed": tests})

    return score


@task
def ops(cases: str | list[str] = "ok", epochs: int = 3) -> Task:
    """The cases named (comma-separated; ``-T cases=a,b`` gives a list), each a sample whose id is the case."""
    names = cases.split(",") if isinstance(cases, str) else [str(c) for c in cases]
    dataset = MemoryDataset([Sample(id=c, input=f"Task {c}: fix the failing build and report the answer",
                                    target="42", metadata={"notes": f"workspace of {c}"})
                             for c in names])
    return Task(dataset=dataset, solver=[trouble(), react(tools=[run_shell()])], scorer=answer(),
                epochs=int(epochs), model=get_model("mockllm/model", custom_outputs=outputs),
                approval=[ApprovalPolicy(reviewer(), "run_shell"), ApprovalPolicy(auto_approver(), "*")],
                message_limit=30, name="ops")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("log_dir")
    ap.add_argument("cases")
    ap.add_argument("--retry-on-error", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--fail-on-error", action="store_true")
    ap.add_argument("--log-format", default="eval")
    args = ap.parse_args()
    inspect_eval(ops(cases=args.cases, epochs=args.epochs), log_dir=args.log_dir, display="none", max_samples=1,
                 retry_on_error=args.retry_on_error or None, fail_on_error=args.fail_on_error, limit=args.limit,
                 log_format=args.log_format)


if __name__ == "__main__":
    sys.exit(main())
