"""The client against a live `cogen serve --preset smoke` (one server for the module; each test
samples its own tasks, and counters are compared before and after)."""

from __future__ import annotations

import json
import threading
import uuid

import pytest

from cogen_client import Cogen, CogenError, Task

from conftest import http


def right(answer: str) -> str:
    return f"The program returns this.\nANSWER: {answer}"


def wrong(answer: str) -> str:
    # a JSON literal that is certainly not the reference answer
    return "ANSWER: " + json.dumps({"not": answer})


def test_health_openapi_and_metrics(server, env):
    h = env.health()
    assert h["status"] == "healthy"
    assert h["run_id"] == server.run_id
    status, headers, body = http("GET", server.url + "/openapi.json")
    assert status == 200
    doc = json.loads(body)
    assert doc["openapi"].startswith("3.1")
    assert "/v1/score" in doc["paths"] and "/v1/sample" in doc["paths"]
    status, headers, body = http("GET", server.url + "/metrics")
    assert status == 200
    assert "# TYPE" in body.decode()


def test_sample_gives_chat_tasks_from_the_curriculum(env):
    tasks = env.sample(5)
    assert len(tasks) == 5
    for t in tasks:
        assert isinstance(t, Task)
        assert t.id and t.type == "deduction"  # the smoke preset serves deduction only
        assert t.family in ("arith", "logic") and t.level == 0
        assert t.skills and all(isinstance(s, str) for s in t.skills)
        assert t.messages == t.prompt
        assert [m["role"] for m in t.prompt][-1] == "user"
        assert all(isinstance(m["content"], str) and m["content"] for m in t.prompt)
        assert t.answer_kind == "literal"
        assert t.expires_at


def test_right_answers_score_1_and_wrong_ones_0(env, answers):
    tasks = env.sample(4)
    ref = answers([t.id for t in tasks])
    pairs = []
    for t in tasks:  # one group of 3 per task: right (ANSWER line), right (fenced block), wrong
        a = ref[t.id]
        pairs += [(t.id, right(a)), (t.id, f"Let me think.\n```json\n{a}\n```"), (t.id, wrong(a))]
    res = env.score_detailed(pairs)
    assert len(res) == len(pairs)
    assert not res.replayed
    for i, r in enumerate(res):
        tid = pairs[i][0]
        assert r.task_id == tid
        if i % 3 < 2:
            assert r.reward == 1.0, (pairs[i], r)
        else:
            assert r.reward == 0.0, (pairs[i], r)
            assert r.reason and "\n" not in r.reason
    assert env.score([]) == []


def test_a_retried_request_returns_the_first_answer_and_counts_once(env, answers):
    tasks = env.sample(2)
    ref = answers([t.id for t in tasks])
    pairs = [(tasks[0].id, right(ref[tasks[0].id])), (tasks[0].id, wrong(ref[tasks[0].id])), (tasks[1].id, right(ref[tasks[1].id]))]
    key = f"test-{uuid.uuid4()}"
    before = env.stats()
    first = env.score_detailed(pairs, idempotency_key=key)
    mid = env.stats()
    again = env.score_detailed(pairs, idempotency_key=key)
    after = env.stats()
    assert [r.reward for r in first] == [1.0, 0.0, 1.0]
    assert not first.replayed and again.replayed
    assert [(r.task_id, r.reward, r.reason, r.answer) for r in again] == [(r.task_id, r.reward, r.reason, r.answer) for r in first]
    assert mid["groups"] - before["groups"] == len({t.id for t in tasks})
    assert after["groups"] == mid["groups"]
    assert after["completions"] == mid["completions"] == before["completions"] + 3
    # the same key with another body is refused, not replayed
    with pytest.raises(CogenError) as e:
        env.score([(tasks[0].id, "ANSWER: 0")], idempotency_key=key)
    assert 400 <= e.value.status < 500


def test_a_large_batch_is_split_into_whole_groups_and_retried_once(env, answers):
    tasks = env.sample(3)
    ref = answers([t.id for t in tasks])
    small = Cogen(env.base_url, max_items=4)
    pairs = [(t.id, c) for t in tasks for c in (right(ref[t.id]), wrong(ref[t.id]), right(ref[t.id]))]
    expected = [1.0, 0.0, 1.0] * 3
    before = env.stats()
    first = small.score_detailed(pairs, idempotency_key=f"big-{uuid.uuid4()}")
    again = small.score_detailed(pairs, idempotency_key=first.idempotency_key)
    assert [r.reward for r in first] == expected and [r.reward for r in again] == expected
    assert [r.task_id for r in first] == [p[0] for p in pairs]
    assert not first.replayed and again.replayed
    after = env.stats()
    assert after["groups"] - before["groups"] == len({t.id for t in tasks})
    assert after["completions"] - before["completions"] == len(pairs)


class DroppingProxy:
    """A loopback proxy that forwards each request to the server, waits for its answer, and for the
    first `drop` requests throws the answer away and closes the connection: the response is lost
    after the server acted on the request, which is what a client retry must survive."""

    def __init__(self, target: str, drop: int):
        import socket
        from urllib.parse import urlsplit

        u = urlsplit(target)
        self.target = (u.hostname, u.port)
        self.drop = drop
        self.forwarded = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        import socket

        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with client:
                data = b""
                while b"\r\n\r\n" not in data:
                    got = client.recv(65536)
                    if not got:
                        break
                    data += got
                if b"\r\n\r\n" not in data:
                    continue
                head, _, body = data.partition(b"\r\n\r\n")
                length = next((int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    body += client.recv(65536)
                with socket.create_connection(self.target, timeout=60) as up:
                    up.sendall(head + b"\r\n\r\n" + body)
                    resp = b""
                    while True:
                        got = up.recv(65536)
                        if not got:
                            break
                        resp += got
                self.forwarded += 1
                if self.drop > 0:
                    self.drop -= 1
                    continue  # the server answered; the client never hears it
                client.sendall(resp)

    def close(self):
        self.sock.close()


def test_a_lost_response_is_retried_with_the_same_key_and_counted_once(env, answers):
    tasks = env.sample(2)
    ref = answers([t.id for t in tasks])
    pairs = [(t.id, right(ref[t.id])) for t in tasks] + [(tasks[0].id, wrong(ref[tasks[0].id]))]
    proxy = DroppingProxy(env.base_url, drop=2)
    try:
        before = env.stats()
        res = Cogen(proxy.url, backoff=0.01).score_detailed(pairs)
    finally:
        proxy.close()
    after = env.stats()
    assert proxy.forwarded == 3  # the server saw the request three times
    assert res.replayed  # the answer that came back is the first one, replayed
    assert [r.reward for r in res] == [1.0, 1.0, 0.0]
    assert after["groups"] - before["groups"] == len({t.id for t in tasks})
    assert after["completions"] - before["completions"] == len(pairs)


def test_concurrent_workers_get_correct_rewards(env, answers):
    workers, per = 4, 3
    batches = [env.sample(per) for _ in range(workers)]
    ref = answers([t.id for b in batches for t in b])
    before = env.stats()
    results, errors = {}, []

    def work(w):
        try:
            pairs = []
            for j, t in enumerate(batches[w]):
                good = (w + j) % 2 == 0
                pairs += [(t.id, right(ref[t.id]) if good else wrong(ref[t.id]))] * 2
            results[w] = (pairs, Cogen(env.base_url).score(pairs))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not errors, errors
    for w, (pairs, rewards) in results.items():
        for (tid, completion), r in zip(pairs, rewards):
            assert r == (1.0 if completion.startswith("The program") else 0.0)
    after = env.stats()
    # one fed group per task id per request (a task sampled twice in one batch is one group)
    assert after["groups"] - before["groups"] == sum(len({t.id for t in b}) for b in batches)
    assert after["completions"] - before["completions"] == workers * per * 2


def test_unknown_task_is_404_with_a_one_line_reason(env):
    with pytest.raises(CogenError) as e:
        env.score([("no-such-task", "ANSWER: 1")])
    assert e.value.status == 404
    assert e.value.reason and "\n" not in e.value.reason


def test_malformed_json_is_400(server):
    status, _, body = http("POST", server.url + "/v1/score", b'{"items": [', {"Content-Type": "application/json"})
    assert status == 400
    err = json.loads(body)["error"]
    assert isinstance(err, str) and err and "\n" not in err


def test_schema_errors_name_the_path(server):
    status, _, body = http("POST", server.url + "/v1/score", json.dumps({"items": [{"task_id": 3}]}).encode(), {"Content-Type": "application/json"})
    assert status == 400
    err = json.loads(body)["error"]
    assert "items" in err and "\n" not in err


def _post_raw(url: str, head: bytes, chunks) -> bytes:
    """Sends a request over a raw socket, writing as much of the body as the server takes (it may
    answer and stop reading early), then reads the response."""
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(url)
    with socket.create_connection((u.hostname, u.port), timeout=30) as s:
        s.sendall(head)
        try:
            for c in chunks:
                s.sendall(c)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        try:
            while b"\r\n\r\n" not in data or len(data) < data.index(b"\r\n\r\n") + 4 + 20:
                got = s.recv(65536)
                if not got:
                    break
                data += got
        except (ConnectionResetError, socket.timeout):
            pass
        return data


def test_oversize_body_is_413(server):
    size = 9 * 1024 * 1024  # the default limit is 8 MiB
    head = f"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode()
    resp = _post_raw(server.url, head, (b"x" * 65536 for _ in range(size // 65536)))
    assert resp.startswith(b"HTTP/1.1 413"), resp[:200]
    assert b'"error"' in resp
    # without a Content-Length (chunked), the limit holds as the body arrives
    head = b"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"
    resp = _post_raw(server.url, head, (chunk for _ in range(size // 65536)))
    assert resp.startswith(b"HTTP/1.1 413"), resp[:200]


def test_too_many_items_is_4xx(server):
    items = [{"task_id": "x", "completion": "1"}] * 5000
    status, _, body = http("POST", server.url + "/v1/score", json.dumps({"items": items}).encode(), {"Content-Type": "application/json"})
    assert 400 <= status < 500
    assert json.loads(body)["error"]


def test_hostile_and_overlong_completions(env):
    t = env.sample(1)[0]
    hostile = [
        "ANSWER: " + "[" * 5000,
        "```json\n" + '{"a":' * 2000 + "1" + "}" * 2000 + "\n```",
        "ANSWER: \u0000\udcff",
        "```js\nwhile(true){}\n```",
    ]
    res = env.score_detailed([(t.id, h) for h in hostile])
    assert [r.reward for r in res] == [0.0] * len(hostile)
    assert all(r.reason for r in res)
    with pytest.raises(CogenError) as e:
        env.score([(t.id, "x" * (64 * 1024 + 1))])
    assert e.value.status == 400 and "completion" in e.value.reason


def test_trl_reward_function(env, answers):
    tasks = env.sample(2)
    ref = answers([t.id for t in tasks])
    g = 4  # TRL repeats each prompt num_generations times; the dataset columns come as lists
    prompts, completions, task_ids, expected = [], [], [], []
    for t in tasks:
        for k in range(g):
            good = k % 2 == 0
            prompts.append(t.messages)
            text = right(ref[t.id]) if good else wrong(ref[t.id])
            # conversational completions: the last assistant message is the answer
            completions.append([{"role": "assistant", "content": text}])
            task_ids.append(t.id)
            expected.append(1.0 if good else 0.0)
    rewards = env.trl_reward(prompts=prompts, completions=completions, completion_ids=None, task_id=task_ids, type=["deduction"] * len(task_ids), trainer_state=None)
    assert rewards == expected
    # plain-string completions too
    t = env.sample(1)[0]
    a = answers([t.id])[t.id]
    assert env.trl_reward(prompts=["p", "p"], completions=[right(a), "no idea"], task_id=[t.id, t.id]) == [1.0, 0.0]


def test_live_dataset_rows(env):
    it = iter(env.as_dataset(batch=3))
    rows = [next(it) for _ in range(7)]  # crosses two sample requests
    assert len({r["task_id"] for r in rows}) >= 1
    for r in rows:
        assert set(r) >= {"prompt", "task_id", "type", "family", "level"}
        assert r["prompt"][-1]["role"] == "user"


def test_hf_iterable_dataset(env):
    datasets = pytest.importorskip("datasets")
    ds = env.as_hf_dataset(batch=4)
    assert isinstance(ds, datasets.IterableDataset)
    rows = list(ds.take(5))
    assert len(rows) == 5
    assert rows[0]["prompt"][-1]["role"] == "user"
    assert isinstance(rows[0]["task_id"], str) and isinstance(rows[0]["level"], int)


def test_hf_dataset_from_one_arm_a_batch(env):
    pytest.importorskip("datasets")
    rows = list(env.as_hf_dataset(batch=6, one_arm=True).take(24))
    batches = [rows[i : i + 6] for i in range(0, 24, 6)]
    assert all(len({(r["family"], r["level"], r["type"]) for r in b}) == 1 for b in batches)
    assert all(len(b) == 6 for b in batches)


def test_verify_is_stateless(env, answers, server):
    t = env.sample(1)[0]
    ref = answers([t.id])
    rows = {json.loads(l)["id"]: json.loads(l) for l in server.export(server.runs_dir.parent / "verify.jsonl").read_text().splitlines() if l.strip()}
    before = env.stats()
    ok = env.verify(rows[t.id], right(ref[t.id]))
    bad = env.verify(json.dumps(rows[t.id]), wrong(ref[t.id]))
    assert ok.reward == 1.0 and bad.reward == 0.0 and bad.reason
    after = env.stats()
    assert after["groups"] == before["groups"] and after["completions"] == before["completions"]
    # and the task can still be scored once in the run
    assert env.score([(t.id, right(ref[t.id]))]) == [1.0]


def test_verl_compute_score_on_an_exported_parquet_row(env, server, tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    from cogen_client import verl

    env.sample(2)  # at least two tasks in the run store
    path = server.export(tmp_path / "tasks.parquet", fmt="parquet")
    table = pq.read_table(path)
    rows = table.to_pylist()
    assert rows
    monkeypatch.setenv("COGEN_URL", server.url)
    for row in rows[:3]:
        rm = row["reward_model"]
        if isinstance(rm, str):  # JSON-typed column (before the struct change)
            rm = json.loads(rm)
        extra = row["extra_info"]
        gt = rm["ground_truth"]
        assert verl.compute_score(row["data_source"], right(gt), gt, extra) == 1.0
        assert verl.compute_score(row["data_source"], wrong(gt), gt, extra) == 0.0
    batch = verl.compute_score_batch(
        [r["data_source"] for r in rows[:2]],
        [right(json.loads(r["reward_model"])["ground_truth"] if isinstance(r["reward_model"], str) else r["reward_model"]["ground_truth"]) for r in rows[:2]],
        [None, None],
        [r["extra_info"] for r in rows[:2]],
    )
    assert batch == [1.0, 1.0]


def test_verl_compute_score_on_a_live_task_id(env, answers, monkeypatch, server):
    from cogen_client import verl

    t = env.sample(1)[0]
    a = answers([t.id])[t.id]
    monkeypatch.setenv("COGEN_URL", server.url)
    assert verl.compute_score("cogen", right(a), None, {"task_id": t.id}) == 1.0


def test_probes_round_trip(env):
    p = env.probes()
    assert isinstance(p["round"], int)
    assert isinstance(p["due"], bool)
    assert p["tasks"], "the smoke preset has probes"
    for t in p["tasks"]:
        assert isinstance(t, Task) and t.prompt
    res = env.report_probes(p["round"], [(t.id, "ANSWER: 0") for t in p["tasks"]])
    assert res["round"] == p["round"]
    assert res["accepted"] is True, res
    assert 0.0 <= res["accuracy"] <= 1.0
    assert isinstance(res["per_skill"], dict) and res["per_skill"]
    assert all(0.0 <= v <= 1.0 for v in res["per_skill"].values())
    assert isinstance(res["events"], list)
    # a second report of the same round does not count again
    again = env.report_probes(p["round"], [(t.id, "ANSWER: 0") for t in p["tasks"]])
    assert again["accepted"] is False and again["detail"]
    # an answer for a task that is not a probe is refused
    with pytest.raises(CogenError) as e:
        env.report_probes(p["round"], [("no-such-task", "1")])
    assert e.value.status == 422


def test_skills_views(env):
    for view in ("mastery", "frontier", "timeline"):
        assert env.skills(view) is not None
    with pytest.raises(CogenError) as e:
        env.skills("nonsense")
    assert e.value.status == 400


def test_openenv_http_simulation_mode(server, answers):
    status, _, body = http("POST", server.url + "/reset", b"{}", {"Content-Type": "application/json"})
    assert status == 200
    r = json.loads(body)
    assert r["done"] is False and r["reward"] is None
    obs = r["observation"]
    tid = obs["task_id"]
    a = answers([tid])[tid]
    step = json.dumps({"action": {"task_id": tid, "completion": right(a)}}).encode()
    status, _, body = http("POST", server.url + "/step", step, {"Content-Type": "application/json"})
    assert status == 200
    r = json.loads(body)
    assert r["reward"] == 1.0 and r["done"] is True
    for path in ("/state", "/schema", "/metadata"):
        status, _, _ = http("GET", server.url + path)
        assert status == 200, path


def test_openenv_generic_client_drives_the_server(server, answers):
    pytest.importorskip("openenv")
    from openenv.core.generic_client import GenericEnvClient

    with GenericEnvClient(base_url=server.url).sync() as client:
        r = client.reset()
        assert r.done is False
        tid = r.observation["task_id"]
        assert r.observation["prompt"]
        a = answers([tid])[tid]
        r = client.step({"completion": right(a)})
        assert r.reward == 1.0 and r.done is True
        r = client.reset(seed=7)
        tid2 = r.observation["task_id"]
        r = client.step({"task_id": tid2, "completion": "ANSWER: \"certainly not\""})
        assert r.reward == 0.0 and r.done is True
        state = client.state()
        assert isinstance(state, dict)
