"""An LM that fails (HTTP 500, a rate limit, a timeout) behind a fake endpoint on 127.0.0.1: the step is
retried, then recorded as failed, and the question ends with a reason; an evaluation goes on and counts it."""
from __future__ import annotations

import http.server
import json
import threading
import time

import pytest

from ferret.optimizers import evaluate as evaluate_module
from ferret.programs import make_program
from ferret.programs.lm import answering, make_lm
from tests.conftest import SAMPLE

QUESTION = "What was total revenue last year?"


@pytest.fixture
def failing_endpoint():
    """An OpenAI-compatible endpoint answering every request with `mode` (500, 429 or a 3 s silence);
    yields (a function making a dspy.LM against it with `mode`, the requests it received)."""
    requests, state = [], {"mode": "500"}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            requests.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if state["mode"] == "timeout":
                time.sleep(3)
            code = 429 if state["mode"] == "429" else 500
            body = json.dumps({"error": {"message": f"fake {code}", "type": "server_error"}}).encode()
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def lm(mode: str):
        state["mode"] = mode
        return make_lm("openai/fake", api_base=f"http://127.0.0.1:{server.server_port}/v1", api_key="none",
                       num_retries=1, timeout=1)

    yield lm, requests
    server.shutdown()


@pytest.mark.parametrize("mode, error", [("500", "LMServerError"), ("429", "LMRateLimitError"),
                                         ("timeout", "LMTransportError")])
def test_a_failing_lm_costs_one_retried_step_and_the_question_ends_with_the_reason(mode, error, small_corpus,
                                                                                   failing_endpoint):
    lm, requests = failing_endpoint
    with answering(lm(mode)):
        result = make_program("iterative", small_corpus)(question=QUESTION)
    assert result.status == "fail" and result.reason.startswith(f"the LM failed: {error}: [openai/fake]")
    assert len(requests) == 2  # the Router's call and its one retry; no later step calls the dead LM
    assert [(step["step"], step["error"].split(":")[0]) for step in result.trajectory] == [("route", error)]


def test_the_one_call_baseline_fails_with_the_reason_too(small_corpus, failing_endpoint):
    lm, requests = failing_endpoint
    with answering(lm("500")):
        result = make_program("oneshot", small_corpus)(question=QUESTION)
    assert result.status == "fail" and "LMServerError: [openai/fake] fake 500" in result.reason and len(requests) == 2


def test_an_evaluation_goes_on_and_counts_the_failed_questions(sample_index, failing_endpoint, monkeypatch):
    lm, requests = failing_endpoint
    failing = lm("429")
    monkeypatch.setattr(evaluate_module, "make_lm", lambda spec=None, threads=None: failing)
    summary = evaluate_module.evaluate("sample", SAMPLE, sample_index, "iterative", "openai/fake", limit=3, track=False)
    assert (summary["n"], summary["n_fail"], summary["n_error"], summary["accuracy"]) == (3, 3, 0, 0.0)
    assert len(requests) == 6
