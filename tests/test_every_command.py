"""The README's "What every command shares", checked on every subcommand.

For each leaf command of ``benchscore`` (and the ``tcsexam`` script) this walks:

- an input file given as the ``--output`` (or ``--output-dir``): one line, exit 2, the input unchanged,
  nothing written;
- a folder where an input file is expected: one line, exit 2, nothing written;
- an unknown option: one line, exit 2;
- Ctrl-C (SIGINT) while the command runs: one line, exit 130, no output file. A command with an
  input file is caught reading it: the command runs with the common reader wrapped so that reading
  that one file blocks (after leaving a marker file), so the command is certainly running when the
  signal arrives. (A FIFO did this before; inputs that are not regular files are refused now.) A
  command without input files is interrupted once its working files appear.

A new command fails ``test_every_command_has_a_spec`` until it is described in SPECS.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest

from benchscore.cli import cli
from benchscore.common.cli import Command

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"
DEMO = ROOT / "src" / "benchscore" / "tcsexam" / "data" / "demo"
BENCHSCORE = [sys.executable, "-c", "from benchscore.cli import main; main()"]
#: the command, with the common reader blocking in its read of the file named by BENCHSCORE_TEST_BLOCK
BLOCK_ON_READ = """
import os, time
from benchscore.common import readers
_read_at_most = readers._read_at_most
def _blocking(fd, size, cap):
    blocked = os.environ["BENCHSCORE_TEST_BLOCK"]
    if os.path.samestat(os.fstat(fd), os.stat(blocked)):
        open(blocked + ".reading", "w").close()
        time.sleep(3600)
    return _read_at_most(fd, size, cap)
readers._read_at_most = _blocking
from benchscore.cli import main
main()
"""


@dataclass
class Spec:
    """How to run a command: ``args`` with ``{name}`` for input files (copied from ``files``) and
    ``{out}`` for a fresh output folder. ``output`` is the output option (None: the command writes no
    file of its own); ``blocked`` the input whose read is blocked for the Ctrl-C test (None: interrupt on
    ``sigint_when`` instead); ``main`` the input the refusal tests swap (default: ``blocked``)."""

    args: list[str]
    files: dict[str, Path] = field(default_factory=dict)
    output: str | None = "--output"
    blocked: str | None = None
    main: str | None = None
    sigint_when: str | None = None  # a path under {out} whose appearance means "running"
    no_sigint: str | None = None  # why Ctrl-C is not checked (the command finishes at once)
    setup: list[list[str]] = field(default_factory=list)  # commands run first (e.g. to make a store)


SEED = EX / "tcsexam" / "seed-example"
MIRA = EX / "mira"
RXN = EX / "rxn"
SWARM = EX / "swarm" / "runtime"
TCS_RUNS = DEMO / "runs" / "demo-maxcut"
RUN_ID = "every-command"
STORE = "sqlite:///{out}/swarm.db"

SPECS: dict[str, Spec] = {
    "tcsexam reference build": Spec(
        ["--id", "t", "--suite", "demo-lite", "--task", "demo-maxcut", "--kind", "objective", "--direction",
         "maximize", "--output", "{out}/ref.json", "{run1}", "{run2}", "{run3}"],
        {"run1": TCS_RUNS / "k3-run-1.json", "run2": TCS_RUNS / "k3-run-2.json", "run3": TCS_RUNS / "k3-run-3.json"},
        blocked="run1"),
    "tcsexam reference merge": Spec(
        ["--id", "m", "--output", "{out}/merged.json", "{part1}", "{part2}"],
        {"part1": SEED / "reference.json", "part2": SEED / "reference.json"}, blocked="part1"),
    "tcsexam reference show": Spec(["{ref}"], {"ref": SEED / "reference.json"}, output=None, blocked="ref"),
    "tcsexam solver-score": Spec(
        ["--task", "maxcut-mqlib", "--records", "{records}", "--reference", "{reference}", "--output", "{out}/s.json"],
        {"records": SEED / "records.json", "reference": SEED / "reference.json"}, blocked="reference"),
    "tcsexam score": Spec(
        ["--suite", "{suite}", "--attempts", "{attempts}", "--cohort", "{cohort}", "--output", "{out}/index.json"],
        {"suite": SEED / "suite.json", "attempts": SEED / "attempts.csv", "cohort": SEED / "cohort.json"},
        blocked="suite"),
    "tcsexam demo": Spec(["--output-dir", "{out}/demo"], output="--output-dir",
                         no_sigint="finishes in well under a second"),
    "mira score": Spec(
        ["--contract", "{contract}", "--repetitions", "{reps}", "--deviations", "{dev}", "--output", "{out}/s.json"],
        {"contract": MIRA / "contract.json", "reps": MIRA / "repetitions.jsonl", "dev": MIRA / "deviations.json"},
        blocked="contract"),
    "mira calibrate": Spec(
        ["--contract", "{contract}", "--observations", "{obs}", "--output", "{out}/c.json"],
        {"contract": MIRA / "contract.json", "obs": MIRA / "observations.jsonl"}, blocked="contract"),
    "mira judge-packets": Spec(
        ["--contract", "{contract}", "--repetitions", "{reps}", "--output-dir", "{out}/packets"],
        {"contract": MIRA / "contract.json", "reps": MIRA / "repetitions_unjudged.jsonl"}, output="--output-dir",
        blocked="contract"),
    "mira judge": Spec(
        ["--packets", "{out}/../packets", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--output",
         "{out}/v.json"],
        {"contract": MIRA / "contract.json", "reps": MIRA / "repetitions_unjudged.jsonl"},
        setup=[["mira", "judge-packets", "--contract", "{contract}", "--repetitions", "{reps}", "--output-dir",
                "{out}/../packets"]],
        no_sigint="its input is a folder of packets; a blocked read is caught the same way in the other commands (one reader)"),
    "mira judge-report": Spec(
        ["--calibration", "{cal}", "--verdicts", "{verdicts}", "--output", "{out}/r.json"],
        {"cal": MIRA / "judge_calibration.jsonl", "verdicts": MIRA / "verdicts_stand_in.json"}, blocked="cal"),
    "mira from-inspect": Spec(
        ["{log}", "--contract", "{contract}", "--mapping", "{mapping}", "--output", "{out}/r.jsonl"],
        {"log": MIRA / "inspect" / "agent.eval", "contract": MIRA / "inspect" / "contract.json",
         "mapping": MIRA / "inspect" / "mapping.json"}, blocked="mapping"),
    "mira project": Spec(["--score", "{score}", "--output", "{out}/p.json"],
                         {"score": MIRA / "expected" / "score.json"}, blocked="score"),
    "rxn build-mc": Spec(["--tables", "{tables}", "--output-dir", "{out}/b"], {"tables": RXN / "literature_tables.json"},
                         output="--output-dir", blocked="tables"),
    "rxn build-fib": Spec(["--tables", "{tables}", "--output-dir", "{out}/b"], {"tables": RXN / "literature_tables.json"},
                          output="--output-dir", blocked="tables"),
    "rxn eval-mc": Spec(
        ["--dataset", "{ds}", "--prediction", "{pred}", "--output", "{out}/e.json"],
        {"ds": RXN / "expected" / "multiple_choice_all_varying.json", "pred": RXN / "predictions_mc.json"}, blocked="ds"),
    "rxn eval-fib": Spec(
        ["--dataset", "{ds}", "--prediction", "{pred}", "--output", "{out}/e.json"],
        {"ds": RXN / "expected" / "fill_in_blank_all_blank_reference.json", "pred": RXN / "predictions_fib.json"},
        blocked="ds"),
    "rxn predict": Spec(
        ["--dataset", "{ds}", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--output", "{out}/p.json"],
        {"ds": RXN / "expected" / "multiple_choice_all_varying.json"}, blocked="ds"),
    "rxn datasets": Spec([], output=None, no_sigint="prints a list at once"),
    "rxn convert-currybo": Spec(["--source", "{src}", "--output-dir", "{out}/c"], {"src": RXN / "literature_tables.csv"},
                                output="--output-dir", blocked="src"),
    "rxn convert-csv": Spec(["--csv", "{csv}", "--output", "{out}/t.json"], {"csv": RXN / "literature_tables.csv"},
                            blocked="csv"),
    "swarm run": Spec(
        ["{tasks}", "{agents}", "--store", STORE, "--run-id", RUN_ID, "--blobs", "{out}/blobs", "--output",
         "{out}/run.json"],
        {"tasks": SWARM / "tasks.jsonl", "agents": SWARM / "agents.json"}, blocked="tasks"),
    "swarm status": Spec([RUN_ID, "--store", STORE], output=None, no_sigint="reads one run at once",
                         files={"tasks": SWARM / "tasks.jsonl", "agents": SWARM / "agents.json"},
                         setup=[["swarm", "run", "{tasks}", "{agents}", "--store", STORE, "--run-id", RUN_ID,
                                 "--blobs", "{out}/blobs"]]),
    "swarm audit": Spec([RUN_ID, "--store", STORE, "--output", "{out}/audit.json"], no_sigint="reads one run at once",
                        files={"tasks": SWARM / "tasks.jsonl", "agents": SWARM / "agents.json"},
                        setup=[["swarm", "run", "{tasks}", "{agents}", "--store", STORE, "--run-id", RUN_ID,
                                "--blobs", "{out}/blobs"]]),
    "swarm stress": Spec(["--agents", "4", "--tasks", "400000", "--store", STORE, "--output", "{out}/l01.json"],
                         sigint_when="swarm.db"),
    "swarm budget": Spec(["--store", STORE, "--output", "{out}/l02.json"],
                         no_sigint="finishes in about a second"),
    "swarm accept": Spec(["S09", "--store", STORE, "--junit", "{junit}", "--output", "{out}/s09.json"],
                         {"junit": ROOT / "tests" / "data" / "junit-swarm.xml"}, main="junit", sigint_when="swarm.db"),
    "demo": Spec(["--output-dir", "{out}/demo"], output="--output-dir", sigint_when="demo/tcsexam"),
    "schema": Spec(["tcsexam-reference"], output=None, no_sigint="prints a schema at once"),
    "list": Spec([], output=None, no_sigint="prints a list at once"),
    "compare": Spec(["{a}", "{b}", "--output", "{out}/cmp.json"],
                    {"a": MIRA / "expected" / "score.json", "b": MIRA / "expected" / "score.json"}, blocked="a"),
    "leaderboard": Spec(["{a}", "{b}", "--resamples", "200", "--output-dir", "{out}/site"],
                        {"a": RXN / "expected" / "eval_mc.json", "b": RXN / "expected" / "eval_mc.json"},
                        output="--output-dir", blocked="a"),
    "verify": Spec(["{score}"], {"score": MIRA / "expected" / "score.json"}, output=None, blocked="score"),
    "report": Spec(["{score}", "{index}", "--output", "{out}/report.html"],
                   {"score": MIRA / "expected" / "score.json", "index": SEED / "expected" / "index.json"},
                   blocked="score"),
}


def _leaves(cmd: click.Command, path: tuple[str, ...] = ()):
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            yield from _leaves(cmd.get_command(ctx, name), (*path, name))
    else:
        yield " ".join(path), cmd


def test_every_command_has_a_spec_and_is_a_common_command():
    leaves = dict(_leaves(cli))
    assert sorted(leaves) == sorted(SPECS), "describe every command in SPECS (and no other)"
    for name, cmd in leaves.items():
        assert isinstance(cmd, Command), f"{name} is not a benchscore.common.cli.Command"


def _prepare(spec: Spec, tmp: Path) -> tuple[dict[str, Path], Path]:
    inputs = tmp / "inputs"
    inputs.mkdir()
    copies = {}
    for name, src in spec.files.items():
        dst = inputs / f"{name}{''.join(src.suffixes)}"
        shutil.copyfile(src, dst)
        copies[name] = dst
    out = tmp / "work" / "out"
    out.mkdir(parents=True)
    return copies, out


def _fill(args: list[str], copies: dict[str, Path], out: Path) -> list[str]:
    values = {k: str(v) for k, v in copies.items()} | {"out": str(out)}
    return [a.format(**values) for a in args]


def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="80")
    return subprocess.run([*BENCHSCORE, *args], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL,
                          timeout=300, **kw)


def _assert_one_line(proc, code: int, *fragments: str) -> None:
    lines = proc.stderr.splitlines()
    assert proc.returncode == code, (proc.returncode, proc.stderr, proc.stdout)
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def _setup(spec: Spec, copies, out) -> None:
    for command in spec.setup:
        done = _run(_fill(command, copies, out))
        assert done.returncode == 0, done.stderr


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _output_index(spec: Spec) -> int:
    return spec.args.index(spec.output) + 1


WITH_OUTPUT_AND_INPUT = sorted(n for n, s in SPECS.items() if s.output and s.files and not s.setup)
WITH_INPUT_FILE = sorted(n for n, s in SPECS.items() if s.blocked or s.main)


def _main(spec: Spec) -> str:
    return spec.main or spec.blocked or next(iter(spec.files))


@pytest.mark.parametrize("name", WITH_OUTPUT_AND_INPUT)
def test_an_input_given_as_the_output_is_refused(name, tmp_path):
    spec = SPECS[name]
    copies, out = _prepare(spec, tmp_path)
    _setup(spec, copies, out)
    args = _fill(spec.args, copies, out)
    victim = copies[_main(spec)]
    before = _snapshot(tmp_path)
    args[_output_index(spec)] = str(victim)
    proc = _run([*name.split(), *args])
    _assert_one_line(proc, 2)
    assert _snapshot(tmp_path) == before, "an input was changed or something was written"


@pytest.mark.parametrize("name", WITH_INPUT_FILE)
def test_a_folder_where_an_input_file_is_expected_is_one_line(name, tmp_path):
    spec = SPECS[name]
    copies, out = _prepare(spec, tmp_path)
    folder = tmp_path / "a-folder.json"
    folder.mkdir()
    copies[_main(spec)] = folder
    args = _fill(spec.args, copies, out)
    proc = _run([*name.split(), *args])
    _assert_one_line(proc, 2)
    assert not any(out.iterdir()), "something was written"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_an_unknown_option_is_one_line(name, tmp_path):
    proc = _run([*name.split(), "--no-such-option"])
    _assert_one_line(proc, 2, "--no-such-option")


def _wait(predicate, proc, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"the command ended before it could be interrupted: {proc.communicate()}"
        assert time.monotonic() < deadline, "the command never reached the point to interrupt"
        time.sleep(0.02)


@pytest.mark.parametrize("name", sorted(n for n, s in SPECS.items() if not s.no_sigint))
def test_ctrl_c_exits_130_with_one_line_and_writes_nothing(name, tmp_path):
    spec = SPECS[name]
    copies, out = _prepare(spec, tmp_path)
    _setup(spec, copies, out)
    args = _fill(spec.args, copies, out)
    before = set(out.rglob("*"))
    launcher, env = BENCHSCORE, None
    if spec.blocked:
        launcher = [sys.executable, "-c", BLOCK_ON_READ]
        env = dict(os.environ, BENCHSCORE_TEST_BLOCK=str(copies[spec.blocked]))
    proc = subprocess.Popen([*launcher, *name.split(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    try:
        if spec.blocked:
            marker = Path(f"{copies[spec.blocked]}.reading")
            _wait(marker.exists, proc)
            time.sleep(0.1)  # from the marker into the sleep
        else:
            _wait(lambda: (out / spec.sigint_when).exists(), proc)
            time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (proc.returncode, stderr)
    lines = stderr.splitlines()
    assert lines == ["error: interrupted (Ctrl-C); nothing was written"], stderr
    if spec.output:
        target = Path(_fill([spec.args[_output_index(spec)]], copies, out)[0])
        assert not target.exists(), f"{target} was written"
    leftovers = [p for p in set(out.rglob("*")) - before if p.name.endswith(".tmp")]
    assert not leftovers, leftovers


def test_the_tcsexam_script_shares_the_rules(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "from benchscore.tcsexam.cli import main; main()", "score",
                           "--bogus"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    _assert_one_line(proc, 2, "--bogus")


def test_missing_output_folders_are_created(tmp_path):
    """The README documents it: an output's missing parent folders are created."""
    copies, out = _prepare(SPECS["tcsexam solver-score"], tmp_path)
    args = _fill(SPECS["tcsexam solver-score"].args, copies, out)
    target = out / "new" / "deeper" / "s.json"
    args[_output_index(SPECS["tcsexam solver-score"])] = str(target)
    proc = _run(["tcsexam", "solver-score", *args])
    assert proc.returncode == 0, proc.stderr
    assert target.is_file()


def test_every_option_of_every_command_has_help():
    """Issue 18, point 12: `rxn eval-mc --prediction` had no help text; now no option of any command lacks one."""
    missing = [f"{name} {'/'.join(p.opts)}" for name, cmd in _leaves(cli) for p in cmd.params
               if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip()]
    assert missing == [], "options without help text: " + ", ".join(missing)


def test_the_help_walk_would_catch_an_option_without_help():
    @click.command(cls=Command)
    @click.option("--bare")
    def bare(bare: str) -> None:
        """A command with an option that says nothing."""

    group = click.Group("g", commands={"bare": bare})
    assert [p.opts for _, cmd in _leaves(group) for p in cmd.params if not p.help] == [["--bare"]]


@pytest.mark.parametrize(("args", "suggestion"), [
    (["rxnn"], "Did you mean 'rxn'?"),
    (["swarm", "acept"], "Did you mean 'accept'?"),
    (["tcsexam", "scor"], "Did you mean 'score'?"),
    (["mira", "judge-packet"], "'judge-packets'"),
    (["rxn", "eval-mcc"], "'eval-mc'"),
])
def test_an_unknown_command_gets_a_did_you_mean(args, suggestion):
    """Issue 18, point 12: `benchscore rxnn` said only "No such command" (the domains are mounted lazily)."""
    proc = subprocess.run([*BENCHSCORE, *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: No such command") and suggestion in lines[0], lines


def test_a_far_unknown_command_gets_no_suggestion():
    proc = subprocess.run([*BENCHSCORE, "zzzz"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Did you mean" not in proc.stderr
