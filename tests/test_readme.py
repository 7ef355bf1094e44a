"""The README, followed as a new user would, twice in a row in one clean copy (issue 18, point 13):
every block that runs here succeeds both times with the same results and leaves no untracked file;
the blocks that need a model server are checked to be re-runnable by what they do; and every link in
the README and docs/ points at a file that exists."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: the README sections whose commands run here, but for the blocks that need the local model server
#: (those run in the tests marked live). The quickstart's `benchscore demo` run twice is
#: tests/test_demo.py::test_the_demo_replaces_only_an_earlier_demo_output; its install and the test
#: suite are what CI runs.
RUNNABLE = ("Your own benchmark", "TCSExam", "Mira", "rxn", "swarm", "Reports", "inspect_ai")
#: outputs that are the evidence of a swarm run: each run gets a new run id (and task ids, ledger
#: head, blobs), so of these the verdicts and counts (top-level values) must agree, not the bytes
RUN_EVIDENCE = ("out/swarm/run.json", "out/swarm/audit.json", "out/swarm/s09.json")
#: what names one run rather than its result
RUN_NAMING = frozenset({"run_id", "ledger_head", "ledger_head_stored"})
#: what the race of the run's worker processes decides, not its result: on a quiet machine the first
#: agent to start may drain the example's few tasks before the third one claims any (3 agents, then 2),
#: and a worker process that claims nothing writes no ledger row, so it is no writer (3 writers, then 2)
SCHEDULING = frozenset({"participating_agents", "ledger_writers"})


def _section(text: str, title: str) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(section: str) -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)


def _needs_a_model(block: str) -> bool:
    return "127.0.0.1:8090" in block or "live-gateway" in block


def _runnable_blocks(text: str) -> list[tuple[str, str]]:
    return [(title, block) for title in RUNNABLE for block in _blocks(_section(text, title)) if not _needs_a_model(block)]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _clean_copy(tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    for rel in _git(ROOT, "ls-files", "-z").split("\0"):
        if rel and (ROOT / rel).is_file():
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, clone / rel)
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "readme test")
    return clone


def _outputs(clone: Path) -> dict[str, bytes]:
    """Every file the README's commands wrote under out/ but a store's database and its blobs."""
    out = {}
    for p in sorted((clone / "out").rglob("*")):
        rel = p.relative_to(clone).as_posix()
        if p.is_file() and not rel.endswith(".db") and not rel.startswith("out/swarm/blobs/"):
            out[rel] = p.read_bytes()
    return out


def _result(raw: bytes) -> dict:
    """A run's verdicts and counts: its top-level values, but what names the run or the worker race decides."""
    doc = orjson.loads(raw)
    return {k: v for k, v in doc.items() if k not in RUN_NAMING | SCHEDULING and not isinstance(v, dict | list)}


def _report_text(outputs: dict[str, bytes]) -> str:
    """What a reader of out/report.html sees, with the S09 run's ids and its file's sha256 masked."""
    html = outputs["out/report.html"].decode()
    html = html.replace(hashlib.sha256(outputs["out/swarm/s09.json"]).hexdigest(), "S09-SHA256")
    html = re.sub(r"accept-[0-9a-f]{8}", "accept-RUN", html)
    return re.sub(r"<[^>]*>", "", html)  # tags hold the figures' element ids, drawn anew each time


def test_following_the_readme_twice_gives_the_same_results_and_leaves_no_untracked_files(tmp_path):
    clone = _clean_copy(tmp_path)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               SOURCE_DATE_EPOCH="1767225600")
    blocks = _runnable_blocks(README.read_text())
    assert len(blocks) >= 6, blocks
    passes = []
    for attempt in ("first", "second"):
        for title, block in blocks:
            proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=clone, env=env,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
            assert proc.returncode == 0, f"README section {title}, {attempt} run:\n{block}\n{proc.stderr}"
        passes.append(_outputs(clone))
        assert _git(clone, "status", "--porcelain") == "", f"the {attempt} run left untracked or changed files"
    first, second = passes
    assert "out/report.html" in first and "out/rxn/eval_mc.json" in first
    assert sorted(first) == sorted(second), "the second run wrote other files than the first"
    for rel in RUN_EVIDENCE:
        assert _result(first[rel]) == _result(second[rel]), f"{rel}: the second run's verdicts differ"
    assert _report_text(first) == _report_text(second), "out/report.html reads differently the second time"
    differ = [rel for rel in first if rel not in (*RUN_EVIDENCE, "out/report.html") and first[rel] != second[rel]]
    assert differ == [], f"the second run wrote other bytes: {differ}"


#: what makes a command fail, or do something else, the second time it runs (one command per line)
NOT_RERUNNABLE = {
    "a build folder found by a glob (a second build adds a second folder)": r"\*_(multiple_choice|fill_in_blank)\b",
    "rxn build-mc/build-fib without --name (a timestamped folder each time)": r"rxn build-(mc|fib)\b(?!.*--name )",
    "a fixed --run-id (a run id names one run: reusing one is refused)": r"--run-id [^$\s]",
    "judge-packets into a fixed folder (it writes only a new folder)": r"judge-packets\b.*--output-dir [^$\s]",
}


def _rerun_problems(block: str) -> list[str]:
    commands = re.sub(r"\\\n\s*", " ", block).splitlines()
    return [f"{why}: {line.strip()}" for line in commands for why, pattern in NOT_RERUNNABLE.items()
            if re.search(pattern, line)]


def test_every_readme_block_is_rerunnable_even_those_that_need_a_model():
    """The blocks the test above cannot run (they need the model server) use no command that fails, or
    finds two folders, the second time; the blocks it runs obey the same rules."""
    text = README.read_text()
    found = {block: _rerun_problems(block) for block in _blocks(text)}
    assert {b: p for b, p in found.items() if p} == {}


def test_the_rerun_check_can_fail():
    """The README blocks of before issue 18 (point 13), each of which failed or misread its second run."""
    old = [
        "benchscore rxn build-mc --tables t.json --max-options 4 --output-dir out/rxn\n"
        "benchscore rxn eval-mc --dataset out/rxn/*_multiple_choice/multiple_choice_all_varying.json \\\n"
        "    --prediction p.json --output out/rxn/eval_mc.json",
        "benchscore swarm run t.jsonl a.json \\\n    --store sqlite:///out/swarm/run.db --run-id example --output o.json",
        "benchscore mira judge-packets --contract c.json \\\n    --repetitions r.jsonl --output-dir out/live/packets",
    ]
    for block in old:
        assert _rerun_problems(block), block
    assert not _rerun_problems("benchscore rxn build-mc --bundled x --output-dir out/rxn --name x_mc\n"
                               "RUN=example-$(date -u +%Y%m%dT%H%M%SZ)\nbenchscore swarm run t a --run-id $RUN\n"
                               "benchscore mira judge-packets --contract c \\\n    --output-dir $PACKETS")


def _links(path: Path) -> list[str]:
    return re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text())


@pytest.mark.parametrize("doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_every_local_link_points_at_a_file(doc):
    for link in _links(doc):
        if "://" in link:
            continue
        assert (doc.parent / link).exists(), f"{doc.name} links to {link}, which does not exist"


def test_the_readme_names_specifications_by_their_system_not_by_a_file():
    text = README.read_text() + "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    assert not re.search(r"\b00[0-4]_[0-9a-f]{16}\.txt\b", text), "a seed file name the user does not have"
    assert not re.search(r"seed `?00[0-4]`?", text), "a seed number the user does not have"


#: a value left for later in a drafted document: a bare ALL_CAPS_NAME where a figure or a
#: verdict belongs (a table cell, a line of its own, or "goal: NAME"), or a TODO/TBD marker
PLACEHOLDER = re.compile(r"(?m)(^\s*[A-Z][A-Z0-9]*_[A-Z0-9_]+\s*$|\|\s*[A-Z][A-Z0-9]*_[A-Z0-9_]+\s*\||"
                         r":\s+[A-Z][A-Z0-9]*_[A-Z0-9_]+\s*\||\bTODO\b|\bTBD\b|\bFIXME\b)")


@pytest.mark.parametrize("doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_no_placeholder_is_left_where_a_figure_belongs(doc):
    found = PLACEHOLDER.findall(doc.read_text())
    assert not found, f"{doc.name}: placeholder left: {found[:3]}"


def test_the_placeholder_check_can_fail():
    draft = "| L01 | cmd | SWARM_SQLITE | under 8 s: SWARM_SQLITE_VERDICT |\n\nSWARM_DETAIL\n"
    assert len(PLACEHOLDER.findall(draft)) >= 2
    assert not PLACEHOLDER.findall("| `BENCHSCORE_LIVE=1` | env `BENCHSCORE_REQUIRE_SERVICES=1` |\n")


def test_the_demo_time_is_stated_with_the_machine_and_the_load_it_was_measured_on():
    """Issue 18, point 14: "about ten seconds" (README) and 5.4 s (docs/performance.md) were measured on a
    quiet machine, or not at all; a figure says where it came from, and the two documents agree."""
    quick = _section(README.read_text(), "Quickstart").split("```bash", 1)[0]
    row = next(line for line in (ROOT / "docs" / "performance.md").read_text().splitlines()
               if line.startswith("| the demo, every domain"))
    ranges = re.findall(r"(\d+-\d+) s\b", quick)
    assert ranges, "the quickstart states no measured range for the demo"
    for text in (quick, row):
        assert "2-core" in text and "load average" in text, text
    for r in ranges:
        assert f"{r} s" in row, f"the quickstart's {r} s is not the figure docs/performance.md measured"
