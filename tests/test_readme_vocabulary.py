"""The README speaks one command style and never leaves a reader waiting (issue 39, point 6): every block
runs ``benchscore ...`` (never the bare ``tcsexam`` script), and a block that needs the local model server
checks first that it answers, which fails within seconds naming the command that starts it."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _commands(block: str) -> list[str]:
    """The block's commands, one per line (continuations joined), comments and blank lines left out."""
    lines = re.sub(r"\\\n\s*", " ", block).splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def _blocks() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", README.read_text(), flags=re.S)


def _needs_a_model(block: str) -> bool:
    return any(s in block for s in ("openai-api/local", "127.0.0.1:8090", "--base-url $URL"))


def test_every_readme_block_runs_benchscore_not_the_bare_tcsexam_script():
    bare = [c for b in _blocks() for c in _commands(b) if re.match(r"(\w+=\S+\s+)*tcsexam\b", c)]
    assert bare == []


def test_every_block_that_needs_the_model_server_first_checks_or_starts_it():
    needing = [b for b in _blocks() if _needs_a_model(b)]
    assert len(needing) >= 2  # the inspect_ai block and the live block
    firsts = [_commands(b)[0].split("#")[0].strip() for b in needing]
    assert all(f in ("scripts/live-gateway.sh check", "scripts/live-gateway.sh start")
               or f.startswith("time scripts/live-gateway.sh install") for f in firsts), firsts


def test_the_check_fails_in_seconds_naming_the_command_that_starts_the_server():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "live-gateway.sh"), "check"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "BENCHSCORE_LIVE_PORT": str(port)}, timeout=60)
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no model server answers at http://127.0.0.1:")
    assert "scripts/live-gateway.sh start" in proc.stderr
