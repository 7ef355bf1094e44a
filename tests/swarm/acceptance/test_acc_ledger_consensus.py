"""Consensus rounds recorded in the ledger and rebuilt from it (accept/ledger_consensus.py)."""

from __future__ import annotations

import sqlite3

import pytest

from benchscore.swarm import open_pool
from benchscore.swarm.accept.ledger_consensus import PooledReviewer, PooledReviser, consensus_from_ledger
from benchscore.swarm.accept.s09 import (
    CONSENSUS_CANDIDATES,
    EVIDENCE_BASE,
    ROLE_WEIGHTS,
    S09_CANDIDATES,
    S09_REVIEWERS,
    EvidenceReviser,
)
from benchscore.swarm.consensus import S09_QUESTIONING_CONSENSUS, QuestioningConsensusSwarm
from benchscore.swarm.fusion import Candidate, fuse_candidate_outputs


@pytest.fixture
def recorded(tmp_path):
    url = f"sqlite:///{tmp_path}/c.db"
    with open_pool(url, "c") as pool:
        pool.create_run()
        swarm = QuestioningConsensusSwarm(CONSENSUS_CANDIDATES, S09_QUESTIONING_CONSENSUS, ROLE_WEIGHTS)
        subject = fuse_candidate_outputs([Candidate(id=k, text=t, score=v) for k, (t, v) in S09_CANDIDATES.items()]).text
        live = swarm.run([PooledReviewer(r, pool, "k") for r in S09_REVIEWERS], subject,
                         reviser=PooledReviser(EvidenceReviser(EVIDENCE_BASE), pool, "k"))
    return url, tmp_path / "c.db", live


def _rebuild(url):
    with open_pool(url, "c") as pool:
        return consensus_from_ledger(pool, "k", candidates=CONSENSUS_CANDIDATES, params=S09_QUESTIONING_CONSENSUS,
                                     role_weights=ROLE_WEIGHTS)


def test_rebuild_from_the_ledger_equals_the_run(recorded):
    url, _, live = recorded
    rebuilt = _rebuild(url)
    assert rebuilt.rounds == live.rounds and rebuilt.accepted_candidate == live.accepted_candidate
    assert rebuilt.round_count >= 2


@pytest.mark.parametrize("capability", ["consensus_vote", "consensus_challenge", "consensus_revision"])
def test_an_output_naming_another_agent_than_the_ledger_is_refused(recorded, capability):
    url, db, _ = recorded
    with sqlite3.connect(db) as conn:
        task_id, output = conn.execute("SELECT id, output FROM swarm_tasks WHERE capability = ? ORDER BY id LIMIT 1",
                                       (capability,)).fetchone()
        forged = output.replace('"agent":"', '"agent":"forger-', 1)
        assert forged != output
        conn.execute("UPDATE swarm_tasks SET output = ? WHERE id = ?", (forged, task_id))
    with pytest.raises(ValueError, match="completed by"):
        _rebuild(url)
