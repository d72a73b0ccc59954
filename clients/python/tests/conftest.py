"""Fixtures: a live `cogen serve` (node bin/cogen.js serve) on a free loopback port.

Each server runs in its own runs directory and is stopped at the end (SIGTERM, then SIGKILL), and
the fixture checks that it exited.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
CLI = REPO_ROOT / "bin" / "cogen.js"
START_TIMEOUT_S = 180


def node() -> str:
    exe = os.environ.get("NODE") or shutil.which("node")
    if not exe:
        pytest.fail("node is not on PATH (the tests start `node bin/cogen.js serve`)")
    return exe


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method: str, url: str, body: Optional[bytes] = None, headers: Optional[Dict[str, str]] = None, timeout: float = 30):
    """One raw request: (status, headers, body bytes); never raises on an HTTP status."""
    req = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


class Server:
    """A `cogen serve` process over a runs directory."""

    def __init__(self, runs_dir: Path, log_dir: Path, args: List[str], env: Optional[Dict[str, str]] = None, name: str = "serve"):
        self.runs_dir = runs_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"{name}-{self.port}.log"
        self.args = args
        self.env = env
        self.proc: Optional[subprocess.Popen] = None
        self.run_id: Optional[str] = None
        self.token: Optional[str] = (env or {}).get("COGEN_TOKEN")

    def start(self) -> "Server":
        full_env = dict(os.environ)
        full_env.pop("COGEN_TOKEN", None)
        full_env.update(self.env or {})
        cmd = [node(), str(CLI), "serve", *self.args, "--port", str(self.port), "--runs-dir", str(self.runs_dir)]
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=self._log, stderr=subprocess.STDOUT, env=full_env, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"cogen serve exited with {self.proc.returncode} before it was healthy:\n{self.log()}")
            try:
                status, _, body = http("GET", self.url + "/health", headers=headers, timeout=5)
                if status == 200:
                    self.run_id = json.loads(body).get("run_id")
                    return self
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"cogen serve was not healthy after {START_TIMEOUT_S} s:\n{self.log()}")
            time.sleep(0.2)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> int:
        """SIGTERM, then SIGKILL after 20 s; returns the exit code and checks that it exited."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
        self._log.close()
        assert self.proc.poll() is not None, "cogen serve did not exit"
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=20)
        self._log.close()

    # -- helpers over the run store, through the CLI ----------------------------------------------

    def export(self, out: Path, fmt: str = "jsonl") -> Path:
        assert self.run_id, "no run id from /health"
        subprocess.run(
            [node(), str(CLI), "export", "--run", self.run_id, "--runs-dir", str(self.runs_dir), "--format", fmt, "--out", str(out)],
            cwd=REPO_ROOT,
            check=True,
            capture_output=True,
            timeout=120,
        )
        return out

    def reference_answers(self, tmp: Path) -> Dict[str, str]:
        """task id -> the reference answer, read from `cogen export` of the served run (the run store)."""
        path = self.export(tmp / f"export-{time.monotonic_ns()}.jsonl")
        out = {}
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out[r["id"]] = r["answer"]
        return out


def start_server(tmp_path_factory, args: List[str], env: Optional[Dict[str, str]] = None, name: str = "serve", runs_dir: Optional[Path] = None) -> Server:
    base = tmp_path_factory.mktemp(name)
    return Server(runs_dir or base / "runs", base, args, env=env, name=name).start()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """One `cogen serve --preset smoke` for the tests that only add to a run."""
    s = start_server(tmp_path_factory, ["--preset", "smoke"])
    yield s
    code = s.stop()
    assert s.proc.poll() is not None
    # SIGTERM is a normal stop: exit 0 (or 143 = 128 + SIGTERM when the runtime dies of the signal)
    assert code in (0, 143, -signal.SIGTERM), f"cogen serve exited with {code}:\n{s.log()}"


@pytest.fixture(scope="session")
def env(server):
    from cogen_client import Cogen

    return Cogen(server.url, timeout=60)


@pytest.fixture
def answers(server, tmp_path):
    """A function: task ids -> their reference answers from the run store."""

    def get(ids):
        ref = server.reference_answers(tmp_path)
        missing = [i for i in ids if i not in ref]
        assert not missing, f"sampled tasks not in the run store's export: {missing[:3]}"
        return {i: ref[i] for i in ids}

    return get
