"""Servers of their own: SIGKILL + --resume loses no acknowledged score and no task; a token guards
the server when one is set."""

from __future__ import annotations

import json
import uuid

import pytest

from cogen_client import Cogen, CogenError

from conftest import Server, http


def test_sigkill_then_resume_keeps_every_acknowledged_score(tmp_path):
    runs = tmp_path / "runs"
    run_id = f"py-resume-{uuid.uuid4().hex[:8]}"
    s = Server(runs, tmp_path, ["--preset", "smoke", "--run-id", run_id], name="first").start()
    try:
        assert s.run_id == run_id
        env = Cogen(s.url)
        tasks = env.sample(6)
        ref = s.reference_answers(tmp_path)
        acked = 0
        keyed = {}
        for t in tasks[:4]:  # four acknowledged groups of two; tasks[4:] stay sampled, unscored
            key = str(uuid.uuid4())
            pairs = [(t.id, f"ANSWER: {ref[t.id]}"), (t.id, "ANSWER: \"no\"")]
            assert env.score(pairs, idempotency_key=key) == [1.0, 0.0]
            keyed[key] = pairs
            acked += 1
        before = env.stats()
        assert before["groups"] >= acked
    finally:
        s.kill()
    assert s.proc.returncode == -9

    r = Server(runs, tmp_path, ["--resume", run_id], name="resumed").start()
    try:
        assert r.run_id == run_id
        env = Cogen(r.url)
        after = env.stats()
        assert after["groups"] == before["groups"]
        assert after["completions"] == before["completions"]
        # a retry of an acknowledged request after the restart is answered from the store
        key, pairs = next(iter(keyed.items()))
        again = env.score_detailed(pairs, idempotency_key=key)
        assert again.replayed and [x.reward for x in again] == [1.0, 0.0]
        assert env.stats()["groups"] == before["groups"]
        # a task sampled before the kill can still be scored
        t = tasks[4]
        assert env.score([(t.id, f"ANSWER: {ref[t.id]}")]) == [1.0]
        assert env.stats()["groups"] == before["groups"] + 1
    finally:
        code = r.stop()
    assert r.proc.poll() is not None
    assert code in (0, 143, -15), r.log()


def test_a_token_guards_the_server_and_never_shows(tmp_path):
    token = f"tok-{uuid.uuid4().hex}"
    s = Server(tmp_path / "runs", tmp_path, ["--preset", "smoke"], env={"COGEN_TOKEN": token}, name="token").start()
    try:
        status, _, body = http("POST", s.url + "/v1/sample", json.dumps({"n": 1}).encode(), {"Content-Type": "application/json"})
        assert status == 401
        assert token not in body.decode()
        status, _, _ = http("POST", s.url + "/v1/sample", b'{"n": 1}', {"Content-Type": "application/json", "Authorization": "Bearer wrong"})
        assert status == 401
        with pytest.raises(CogenError) as e:
            Cogen(s.url, token="wrong").sample(1)
        assert e.value.status == 401
        env = Cogen(s.url, token=token)
        assert len(env.sample(2)) == 2
    finally:
        s.stop()
    assert token not in s.log_path.read_text(errors="replace")
    for f in (tmp_path / "runs").rglob("*"):
        if f.is_file():
            assert token.encode() not in f.read_bytes(), f
