"""The bundled unit checks behind A02 in the demo: real checks, whose failures reach the JUnit report and A02."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from benchscore.swarm.accept import unit_checks
from benchscore.swarm.accept.matrix import a02, junit_check


def test_every_bundled_check_passes_and_is_reported(tmp_path):
    path = unit_checks.write_unit_checks(tmp_path / "u.xml")
    suite = ET.fromstring(path.read_bytes()).find("testsuite")
    assert suite.get("tests") == str(len(unit_checks.CHECKS)) >= "5"
    assert all(c.get("classname") == unit_checks.CLASSNAME and not list(c) for c in suite.iter("testcase"))
    check = junit_check(path)
    assert check.passed and check.evidence["swarm_testcases"] == len(unit_checks.CHECKS)
    assert a02(path).passed
    assert path.read_bytes() == unit_checks.run_unit_checks()  # no time or timestamp: the same bytes


def test_a_failing_or_crashing_check_fails_a02(tmp_path, monkeypatch):
    def wrong() -> None:
        from benchscore.swarm.consensus import evaporate

        unit_checks._require(evaporate({"a": 2.0}, 0.5) == {"a": 2.0})  # not what evaporation does

    def crashing() -> None:
        raise RuntimeError("boom")

    path = tmp_path / "u.xml"
    monkeypatch.setattr(unit_checks, "CHECKS", (*unit_checks.CHECKS, wrong, crashing))
    unit_checks.write_unit_checks(path)
    suite = ET.fromstring(path.read_bytes()).find("testsuite")
    assert (suite.get("failures"), suite.get("errors")) == ("1", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["wrong"].find("failure") is not None and "boom" in cases["crashing"].find("error").get("message")
    assert not junit_check(path).passed and not a02(path).passed


def test_the_checks_test_the_code_not_themselves(monkeypatch):
    """A broken formula makes its check fail: the checks call the swarm's own functions."""
    from benchscore.swarm import fusion

    monkeypatch.setattr(fusion, "fuse_candidate_outputs", lambda cands, min_score=0.5: fusion.FusedOutput(
        text="", score=0.0, sources=(), filtered_out=(), min_score=min_score))
    report = unit_checks.run_unit_checks((unit_checks.check_fusion_filters_and_weights,))
    assert b'failures="1"' in report
