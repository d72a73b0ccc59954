"""The client's own behaviour, against a scripted stand-in server on loopback (no node needed)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cogen_client import Cogen, CogenError, completion_text


class Scripted:
    """A tiny HTTP server that answers from a script of (status, body) and records requests."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                owner.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
                step = owner.script.pop(0) if owner.script else (500, {"error": "script exhausted"})
                status, payload = step[0], step[1]
                extra = step[2] if len(step) > 2 else {}
                if status is None:  # drop the connection without answering
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = _answer
            do_POST = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


OK = {"results": [{"task_id": "t1", "reward": 1.0, "reason": None, "answer": "3"}, {"task_id": "t1", "reward": 0.0, "reason": "wrong", "answer": "4"}], "replayed": False}


def test_score_retries_5xx_and_dropped_connections_with_the_same_key():
    with Scripted([(503, {"error": "busy"}), (None, None), (200, OK)]) as s:
        env = Cogen(s.url, backoff=0.01)
        res = env.score_detailed([("t1", "ANSWER: 3"), ("t1", "ANSWER: 4")])
        assert [r.reward for r in res] == [1.0, 0.0]
        assert res[1].reason == "wrong"
        bodies = [json.loads(r["body"]) for r in s.requests]
        assert len(bodies) == 3
        keys = {b["idempotency_key"] for b in bodies}
        assert len(keys) == 1 and res.idempotency_key in keys
        assert all(r["headers"].get("Idempotency-Key") == res.idempotency_key for r in s.requests)
        assert bodies[0]["items"] == [{"task_id": "t1", "completion": "ANSWER: 3"}, {"task_id": "t1", "completion": "ANSWER: 4"}]


def test_a_given_key_is_sent_as_is_and_retries_are_bounded():
    with Scripted([(500, {"error": "boom"})] * 10) as s:
        env = Cogen(s.url, retries=2, backoff=0.01)
        with pytest.raises(CogenError) as e:
            env.score([("t1", "x")], idempotency_key="my-key")
        assert e.value.status == 500 and e.value.reason == "boom"
        assert len(s.requests) == 3
        assert {json.loads(r["body"])["idempotency_key"] for r in s.requests} == {"my-key"}


def test_4xx_is_not_retried_and_carries_the_servers_reason():
    with Scripted([(404, {"error": 'unknown task "nope"'})]) as s:
        env = Cogen(s.url, backoff=0.01)
        with pytest.raises(CogenError) as e:
            env.score([("nope", "1")])
        assert e.value.status == 404
        assert e.value.reason == 'unknown task "nope"'
        assert "404" in str(e.value)
        assert len(s.requests) == 1


def test_sample_is_never_retried():
    with Scripted([(503, {"error": "busy"}), (200, {"tasks": []})]) as s:
        with pytest.raises(CogenError):
            Cogen(s.url, backoff=0.01).sample(2)
        assert len(s.requests) == 1


def test_token_from_env_is_sent_as_bearer_and_not_shown(monkeypatch):
    monkeypatch.setenv("COGEN_TOKEN", "s3cret")
    with Scripted([(200, {"status": "healthy", "run_id": "r"})]) as s:
        env = Cogen(s.url)
        assert env.health()["run_id"] == "r"
        assert s.requests[0]["headers"]["Authorization"] == "Bearer s3cret"
        assert "s3cret" not in repr(env)


def test_unreachable_server_is_a_cogen_error_without_status():
    with Scripted([]) as s:
        url = s.url
    with pytest.raises(CogenError) as e:
        Cogen(url, retries=1, backoff=0.01).health()
    assert e.value.status is None


def test_completion_text_takes_strings_and_conversations():
    assert completion_text("ANSWER: 3") == "ANSWER: 3"
    conv = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "ANSWER: 7"}]
    assert completion_text(conv) == "ANSWER: 7"
    assert completion_text([{"role": "assistant", "content": "a"}, {"role": "tool", "content": "t"}]) == "a"
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "ANSWER: "}, {"type": "text", "text": "1"}]}]) == "ANSWER: 1"
    assert completion_text({"role": "assistant", "content": "x"}) == "x"
    assert completion_text([]) == ""


def test_trl_reward_needs_the_task_id_column():
    env = Cogen("http://127.0.0.1:9")
    with pytest.raises(ValueError, match="task_id"):
        env.trl_reward(prompts=["p"], completions=["c"])
    with pytest.raises(ValueError):
        env.trl_reward(prompts=["p"], completions=["c", "d"], task_id=["t"])
    assert env.trl_reward.__name__ == "trl_reward"


def test_verl_compute_score_without_a_task_is_an_error(monkeypatch):
    from cogen_client import verl

    monkeypatch.setenv("COGEN_URL", "http://127.0.0.1:9")
    with pytest.raises(ValueError, match="extra_info"):
        verl.compute_score("cogen/arith", "1", "1", {})


def test_verl_module_loads_by_file_path_as_verl_does(monkeypatch):
    # veRL's custom_reward_function.path=/path/to/verl.py loads the file under a name of its own
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "cogen_client" / "verl.py"
    spec = importlib.util.spec_from_file_location("custom_module_cogen_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert callable(mod.compute_score) and callable(mod.compute_score_batch)
    with Scripted([(200, {"reward": 1.0, "reason": None, "answer": "3"})]) as s:
        monkeypatch.setenv("COGEN_URL", s.url)
        task = {"id": "t", "type": "deduction", "program": "function f(a) { return a + 1; }", "input": [2], "output": 3}
        # extra_info as veRL hands it over: the parquet struct as a dict, the task as JSON text, plus veRL's own keys
        assert mod.compute_score("cogen/arith", "ANSWER: 3", "3", {"task": json.dumps(task), "num_turns": None}) == 1.0
        sent = json.loads(s.requests[0]["body"])
        assert s.requests[0]["path"] == "/v1/verify"
        assert sent == {"task": task, "completion": "ANSWER: 3"}


def test_a_batch_over_max_items_goes_as_several_requests_of_whole_groups():
    def answer(n, start):
        return (200, {"results": [{"task_id": "?", "reward": float(start + i), "reason": None, "answer": ""} for i in range(n)], "replayed": False})

    # items: a a b b b c  (limit 4) -> requests [a a] + ... grouped: {a: 0,1  b: 2,3,4  c: 5} -> [a a] [b b b c]
    pairs = [("a", "1"), ("a", "2"), ("b", "3"), ("b", "4"), ("b", "5"), ("c", "6")]
    with Scripted([answer(2, 0), answer(4, 10)]) as s:
        env = Cogen(s.url, max_items=4, backoff=0.01)
        res = env.score_detailed(pairs, idempotency_key="K")
        bodies = [json.loads(r["body"]) for r in s.requests]
        assert [[it["task_id"] for it in b["items"]] for b in bodies] == [["a", "a"], ["b", "b", "b", "c"]]
        assert [b["idempotency_key"] for b in bodies] == ["K/0", "K/1"]
        assert [r.reward for r in res] == [0.0, 1.0, 10.0, 11.0, 12.0, 13.0]
        assert not res.replayed


def test_score_fails_over_to_the_next_replica_with_the_same_key_and_stays_there():
    with Scripted([(503, {"error": "the run store failed"}, {"Retry-After": "0"})]) as a, Scripted([(200, OK), (200, OK)]) as b:
        env = Cogen([a.url, b.url], backoff=0.01)
        res = env.score_detailed([("t1", "ANSWER: 3"), ("t1", "ANSWER: 4")])
        assert [r.reward for r in res] == [1.0, 0.0]
        keys = [json.loads(r["body"])["idempotency_key"] for r in a.requests + b.requests]
        assert len(a.requests) == 1 and len(b.requests) == 1 and len(set(keys)) == 1
        env.score([("t1", "ANSWER: 3"), ("t1", "ANSWER: 4")])
        assert len(a.requests) == 1 and len(b.requests) == 2
        assert env.base_url == b.url


def test_a_refused_connection_goes_to_the_next_replica_even_for_sample():
    with Scripted([]) as gone:
        dead = gone.url
    with Scripted([(200, {"tasks": []})]) as live:
        env = Cogen(f"{dead}, {live.url}/", backoff=0.01)
        assert env.base_urls == [dead, live.url]
        assert env.sample(2) == []
        assert len(live.requests) == 1


def test_a_503_waits_as_long_as_retry_after_says_before_the_next_round(monkeypatch):
    slept = []
    monkeypatch.setattr("cogen_client.client.time.sleep", lambda s: slept.append(s))
    with Scripted([(503, {"error": "busy"}, {"Retry-After": "2"}), (200, OK)]) as s:
        env = Cogen(s.url, backoff=0.01)
        assert env.score([("t1", "a"), ("t1", "b")]) == [1.0, 0.0]
    assert len(slept) == 1 and slept[0] >= 2


def test_an_empty_list_of_replicas_is_refused():
    with pytest.raises(ValueError, match="base URL"):
        Cogen([])
