"""Agents that call a model through common.llm, with the TPM budget as the client's budget."""

from __future__ import annotations

from benchscore.common.llm import LLMClient
from benchscore.common.testserver import OpenAITestServer
from benchscore.swarm import Agent, TaskSpec, TPMBudget, audit_pool, llm_handler, open_pool
from benchscore.swarm.agents import run_agents


def test_llm_agents_reserve_and_reconcile_through_the_budget(tmp_path):
    url = f"sqlite:///{tmp_path}/run.db"
    with OpenAITestServer(models=["m"], responder=lambda model, messages: "four words of answer") as srv, \
            TPMBudget(url, "tpm", 200, simulated=True) as budget, open_pool(url, "llm") as pool:
        pool.create_run()
        pool.add_tasks(TaskSpec(capability="ask", payload={"prompt": f"question {i}"}) for i in range(6))
        srv.fail_next(1, status=500)  # retried by the client, not a task failure
        with LLMClient(srv.base_url, budget=budget, max_retries=2) as client:
            handler = llm_handler(client, "m", lambda claim, text: len(text.split()) / 10, max_tokens=40)
            run_agents(pool, [Agent("a", ["ask"], handler), Agent("b", ["ask"], handler)])
        assert pool.counts()["done"] == 6
        assert pool.converge().accepted_output == "four words of answer"
        assert pool.converge().accepted_score == 0.4
        windows = budget.windows()
        assert max(windows.values()) <= 200
        assert sum(windows.values()) > 0
        assert audit_pool(pool).verdict == "PASS"
        assert len(srv.requests) >= 6


def test_failed_model_call_is_a_task_failure(tmp_path):
    url = f"sqlite:///{tmp_path}/run.db"
    with OpenAITestServer(models=["m"]) as srv, open_pool(url, "llm") as pool:
        pool.create_run()
        pool.add_tasks([TaskSpec(capability="ask", payload={"prompt": "q"}, max_attempts=1)])
        with LLMClient(srv.base_url, max_retries=0) as client:
            run_agents(pool, [Agent("a", ["ask"], llm_handler(client, "no-such-model", lambda c, t: 1.0))])
        assert pool.counts()["failed"] == 1
        assert pool.pheromones()[0][2] == -1.0
