"""Fast start: ``tcsexam --help`` (and any command's --help) imports no heavy module; names stay reachable.

No timing is asserted (the machine is shared): what is checked is which modules get imported.
The timings are measured by ``python -X importtime -c "import benchscore.tcsexam.cli"`` and
``/usr/bin/time .venv/bin/tcsexam --help`` (see docs/tcsexam.md).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import benchscore

HEAVY = ("numpy", "scipy", "pydantic", "rich", "orjson")

PROBE = f"""
import json, sys
from benchscore.tcsexam.cli import group
code = 0
try:
    group.main(sys.argv[1:], prog_name="tcsexam")
except SystemExit as exc:
    code = exc.code
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & {set(HEAVY)!r})
print(json.dumps({{"code": code, "heavy": heavy}}), file=sys.stderr)
"""


def _probe(*args: str) -> tuple[dict, str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return json.loads(proc.stderr.strip().splitlines()[-1]), proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["solver-score", "--help"],
        ["score", "--help"],
        ["reference", "--help"],
        ["reference", "build", "--help"],
        ["demo", "--help"],
        ["--version"],
    ],
)
def test_help_and_version_import_no_heavy_module(args):
    got, stdout = _probe(*args)
    assert got["code"] in (0, None), got
    assert got["heavy"] == [], f"`tcsexam {' '.join(args)}` imported {got['heavy']}"
    assert stdout.strip()


def test_version_prints_the_benchscore_version():
    _, stdout = _probe("--version")
    assert benchscore.__version__ in stdout and "benchscore" in stdout


def test_importing_the_package_and_its_cli_is_light():
    code = (
        "import sys, benchscore.tcsexam, benchscore.tcsexam.cli\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_public_names_are_reachable_lazily():
    import benchscore.tcsexam as tcs

    for name in tcs.__all__:
        assert getattr(tcs, name) is not None, name
    assert sorted(dir(tcs)) == sorted(tcs.__all__)
    with pytest.raises(AttributeError):
        tcs.no_such_name  # noqa: B018


def test_formats_attribute_and_the_umbrella_schema_listing():
    from click.testing import CliRunner

    from benchscore.cli import cli
    from benchscore.tcsexam import cli as tcs_cli
    from benchscore.tcsexam.formats import FORMATS

    assert dict(tcs_cli.FORMATS) == FORMATS
    listing = CliRunner().invoke(cli, ["schema"])
    assert listing.exit_code == 0
    for name in FORMATS:
        assert f"{name}\t" in listing.output
    one = CliRunner().invoke(cli, ["schema", "tcsexam-cohort"])
    assert "adoption_rule" in json.loads(one.output)["required"]
