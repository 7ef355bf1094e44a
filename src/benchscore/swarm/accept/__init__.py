"""Acceptance scenarios of the swarm (seed sections 8-10, 12-13): S07, S08, S09, S10, A04, the matrix.

Each scenario runs something real (a pool run on the runtime, model calls through the gateway),
then evaluates its checks with a pure function of the evidence it read back (the run's ledger,
tasks, convergences, blobs, call records). A check is PASS or FAIL with the evidence it read;
nothing is asserted.
"""

from .evidence import Check, ScenarioResult, all_passed

__all__ = ["Check", "ScenarioResult", "all_passed"]
