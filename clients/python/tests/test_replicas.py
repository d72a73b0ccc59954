"""Two live `cogen serve` replicas of one run on PostgreSQL (docs/scale-out.md): the client takes both
base URLs, and when one is killed (SIGKILL) its requests go to the other; an acknowledged score is
answered again from the store, once, with the same body.

PostgreSQL: COGEN_TEST_POSTGRES_URL (its password in PGPASSWORD), or Debian's postgresql started here
on a loopback port (as the postgres user when run as root). Without one the test is skipped, and
under CI=true it fails.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from cogen_client import Cogen

from conftest import Server

INSTALL = "apt-get install -y postgresql"


def _pg_bin():
    base = Path("/usr/lib/postgresql")
    versions = sorted((p for p in base.glob("*/bin/initdb")), key=lambda p: float(p.parts[-3]), reverse=True) if base.exists() else []
    return versions[0].parent if versions else None


def _as_postgres(cmd):
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


class Postgres:
    def __init__(self, url, password, stop=None):
        self.url = url
        self.password = password
        self._stop = stop

    def psql(self, sql):
        out = subprocess.run(["psql", "-At", "-d", self.url, "-c", sql], env={**os.environ, "PGPASSWORD": self.password}, check=True, capture_output=True, text=True, timeout=60)
        return out.stdout

    def stop(self):
        if self._stop:
            self._stop()


def _start_local():
    bin_dir = _pg_bin()
    if bin_dir is None or not shutil.which("psql"):
        raise RuntimeError(f"Debian's postgresql is not installed ({INSTALL})")
    password = secrets.token_hex(16)
    # Not under pytest's tmp_path: the postgres user must be able to reach its data directory.
    tmp = Path(tempfile.mkdtemp(prefix="cogen-pg-pytest-"))
    pwfile = tmp / "pw"
    pwfile.write_text(password + "\n")
    os.chmod(pwfile, 0o600)
    if os.geteuid() == 0:
        shutil.chown(tmp, "postgres", "postgres")
        shutil.chown(pwfile, "postgres", "postgres")
        os.chmod(tmp, 0o700)
    made = subprocess.run(_as_postgres([str(bin_dir / "initdb"), "-D", str(tmp / "data"), "-A", "scram-sha-256", "-U", "postgres", f"--pwfile={pwfile}", "--no-sync"]), capture_output=True, text=True, timeout=120)
    pwfile.unlink()
    if made.returncode != 0:
        raise RuntimeError(f"initdb failed: {(made.stderr or made.stdout).strip().splitlines()[-1:]}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(_as_postgres([str(bin_dir / "postgres"), "-D", str(tmp / "data"), "-c", "listen_addresses=127.0.0.1", "-p", str(port), "-k", str(tmp), "-c", "fsync=off"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)

    def stop():
        subprocess.run(_as_postgres([str(bin_dir / "pg_ctl"), "-D", str(tmp / "data"), "stop", "-m", "immediate"]), capture_output=True, timeout=60)
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)

    return Postgres(f"postgres://postgres@127.0.0.1:{port}/postgres", password, stop)


@pytest.fixture(scope="module")
def postgres():
    if os.environ.get("COGEN_TEST_POSTGRES_URL"):
        yield Postgres(os.environ["COGEN_TEST_POSTGRES_URL"], os.environ.get("PGPASSWORD", ""))
        return
    try:
        pg = _start_local()
    except Exception as e:  # noqa: BLE001 - one line, then skip or fail
        reason = f"no PostgreSQL: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        if os.environ.get("CI") in ("true", "1"):
            pytest.fail(reason)
        pytest.skip(reason)
    yield pg
    pg.stop()


def test_a_killed_replica_fails_over_and_nothing_acknowledged_is_lost(tmp_path, postgres):
    run_id = f"py-replicas-{uuid.uuid4().hex[:8]}"
    env_vars = {"PGPASSWORD": postgres.password}
    args = ["--preset", "smoke", "--store", postgres.url, "--run-id", run_id]
    a = Server(tmp_path / "a", tmp_path, args, env=env_vars, name="a").start()
    b = Server(tmp_path / "b", tmp_path, args, env=env_vars, name="b").start()
    try:
        assert a.run_id == b.run_id == run_id
        env = Cogen([a.url, b.url], backoff=0.05)
        tasks = env.sample(4)
        rows = postgres.psql(f'SELECT id, data FROM "{run_id}".tasks')
        output = {line.split("|", 1)[0]: json.loads(line.split("|", 1)[1])["output"] for line in rows.splitlines() if line}
        pairs = lambda t: [(t.id, f"ANSWER: {json.dumps(output[t.id])}"), (t.id, 'ANSWER: "no"')]  # noqa: E731
        first = env.score_detailed(pairs(tasks[0]))
        assert [r.reward for r in first] == [1.0, 0.0]
        a.kill()
        # A refuses connections now: the next requests go to B, the retry of an acknowledged one included.
        second = env.score_detailed(pairs(tasks[1]))
        assert [r.reward for r in second] == [1.0, 0.0]
        again = env.score_detailed(pairs(tasks[0]), idempotency_key=first.idempotency_key)
        assert again.replayed
        assert [(r.task_id, r.reward, r.reason, r.answer) for r in again] == [(r.task_id, r.reward, r.reason, r.answer) for r in first]
        stats = env.stats()
        assert env.base_url == b.url
        assert (stats["step"], stats["completions"], stats["groups"]) == (2, 4, 2)
    finally:
        if a.proc and a.proc.poll() is None:
            a.stop()
        code = b.stop()
    assert code in (0, 143, -15), b.log()
