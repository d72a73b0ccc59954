"""cogen's environments (probe, repair, search) for TRL's `environment_factory`.

TRL's GRPOTrainer (trl/trainer/grpo_trainer.py, `environment_factory`) builds one instance per rollout
by calling the factory with no arguments, calls `reset(**row)` before generation (a returned string is
appended to the last user message), exposes every public method other than `reset` and
`get_reward` as a tool (so each needs type hints and a Google-style docstring with an Args
section, as transformers' `get_json_schema` reads them), and calls `get_reward()` once the rollout
is over when the class defines it.

Each instance plays one episode at a time of a live `cogen serve` through its OpenEnv endpoints:
`reset` starts one (`POST /reset {env: {kind, family, level}, seed}`), each tool call is one step
(`POST /step {action: {episode_id, name, arguments}}`), and the server verifies the final answer in
its sandbox. A malformed call or one over the budget ends the episode with reward 0.

    from functools import partial
    from cogen_client.envs import CogenProbeEnv
    trainer = GRPOTrainer(..., environment_factory=partial(CogenProbeEnv, "http://127.0.0.1:8787", level=0))
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from .client import DEFAULT_URL, Cogen

__all__ = ["CogenEnv", "CogenProbeEnv", "CogenRepairEnv", "CogenSearchEnv", "ENV_CLASSES"]


class CogenEnv:
    """One environment episode at a time; subclasses name the kind and define its tools."""

    kind = ""

    def __init__(self, base_url: str = DEFAULT_URL, family: Optional[str] = None, level: int = 0, token: Optional[str] = None, timeout: float = 60):
        self._client = Cogen(base_url, token=token, timeout=timeout, retries=0)
        self._family = family
        self._level = level
        self._episode: Optional[str] = None
        self._reward = 0.0
        self._done = False
        #: The reason the last episode ended without reward 1 (None while it runs or after a full reward).
        self.reason: Optional[str] = None
        #: The first observation of the current episode (prompt messages, tools, budgets, env id).
        self.observation: Dict[str, Any] = {}

    def reset(self, seed: Optional[int] = None, **kwargs: Any) -> str:
        """Starts an episode and returns its prompt. TRL passes the dataset row as keyword arguments;
        a `seed` among them picks the environment (the same seed, the same environment)."""
        env: Dict[str, Any] = {"kind": self.kind, "level": int(kwargs.get("level", self._level))}
        family = kwargs.get("family", self._family)
        if family:
            env["family"] = family
        body: Dict[str, Any] = {"env": env}
        if seed is not None:
            body["seed"] = int(seed)
        r = self._client._request("POST", "/reset", body)
        self.observation = r["observation"]
        self._episode = self.observation["episode_id"]
        self._reward, self._done, self.reason = 0.0, False, None
        return next(m["content"] for m in self.observation["prompt"] if m["role"] == "user")

    def get_reward(self) -> float:
        """The final verified reward of the episode (0 until it ends)."""
        return self._reward

    @property
    def done(self) -> bool:
        return self._done

    def _step(self, name: str, arguments: Dict[str, Any]) -> str:
        if self._episode is None:
            raise RuntimeError("call reset() before the tools")
        if self._done:
            return "the episode is over"
        r = self._client._request("POST", "/step", {"action": {"episode_id": self._episode, "name": name, "arguments": json.dumps(arguments)}})
        obs = r["observation"]
        if r["done"]:
            self._done = True
            self._reward = float(r["reward"] or 0.0)
            self.reason = obs.get("reason")
        return obs["result"]


class CogenProbeEnv(CogenEnv):
    """probe: call a hidden function f, then submit a program that behaves the same."""

    kind = "probe"

    def call(self, args: List[Any]) -> str:
        """Call the hidden function f on an argument list and see what it returns. Each call uses one of the call budget.

        Args:
            args: The argument list, as a JSON array, e.g. [3, "ab"].
        """
        return self._step("call", {"args": args})

    def submit(self, program: str) -> str:
        """Submit a program for f; it is checked on hidden tests and the episode ends.

        Args:
            program: JavaScript source declaring function f, or an arrow function.
        """
        return self._step("submit", {"program": program})


class CogenRepairEnv(CogenEnv):
    """repair: fix a program with a planted bug, running candidates against its visible tests."""

    kind = "repair"

    def run_tests(self, program: str) -> str:
        """Run a candidate program on the visible tests and see which pass. Each run uses one of the call budget.

        Args:
            program: JavaScript source declaring function f, or an arrow function.
        """
        return self._step("run_tests", {"program": program})

    def submit(self, program: str) -> str:
        """Submit the repaired program; it is checked on hidden tests and the episode ends.

        Args:
            program: JavaScript source declaring function f, or an arrow function.
        """
        return self._step("submit", {"program": program})


class CogenSearchEnv(CogenEnv):
    """search: find an argument list x with f(...x) equal to a target output."""

    kind = "search"

    def call(self, x: List[Any]) -> str:
        """Call f on an argument list and see what it returns. Each call uses one of the call budget.

        Args:
            x: The argument list, as a JSON array, e.g. [3, "ab"].
        """
        return self._step("call", {"x": x})

    def submit(self, x: List[Any]) -> str:
        """Submit an argument list x with f(...x) equal to the target; the episode ends.

        Args:
            x: The argument list, as a JSON array, e.g. [3, "ab"].
        """
        return self._step("submit", {"x": x})


ENV_CLASSES = {"probe": CogenProbeEnv, "repair": CogenRepairEnv, "search": CogenSearchEnv}
