"""The environment classes for TRL's environment_factory, against a live `cogen serve`: the contract
TRL checks (reset, public methods as typed and documented tools, get_reward), episodes that reach
reward 1 with the reference actions, and malformed calls that end with reward 0."""

from __future__ import annotations

import inspect
import json
import subprocess
import typing

import pytest

from cogen_client.envs import ENV_CLASSES, CogenProbeEnv, CogenSearchEnv

from conftest import REPO_ROOT, node


def reference(kind: str, family: str, level: int, seed: int):
    """The reference actions for the environment a request makes (computed by the engine itself)."""
    tsx = REPO_ROOT / "node_modules" / "tsx" / "dist" / "cli.mjs"
    out = subprocess.run([node(), str(tsx), "clients/python/tests/env_reference.ts", kind, family, str(level), str(seed)], cwd=REPO_ROOT, check=True, capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout)


def tools_as_trl_sees_them(instance):
    # As trl/trainer/grpo_trainer.py collects them: bound public methods other than reset and get_reward.
    return {n: m for n, m in inspect.getmembers(instance, predicate=inspect.ismethod) if n not in ("reset", "get_reward") and not n.startswith("_")}


@pytest.mark.parametrize("kind", sorted(ENV_CLASSES))
def test_the_environment_factory_contract(server, kind):
    env = ENV_CLASSES[kind](server.url)
    assert callable(env.reset) and callable(env.get_reward)
    tools = tools_as_trl_sees_them(env)
    expected = {"probe": {"call", "submit"}, "repair": {"run_tests", "submit"}, "search": {"call", "submit"}}[kind]
    assert set(tools) == expected
    for name, method in tools.items():
        hints = typing.get_type_hints(method)
        params = [p for p in inspect.signature(method).parameters]
        assert hints.get("return") is str, name
        doc = inspect.getdoc(method)
        assert doc and "Args:" in doc, name
        for p in params:
            assert p in hints and f"{p}:" in doc.split("Args:")[1], (name, p)
    try:  # the schema transformers builds for a tool, when transformers is installed
        from transformers.utils import get_json_schema
    except ImportError:
        return
    for method in tools.values():
        assert get_json_schema(method)["function"]["name"] in expected


@pytest.mark.parametrize("kind", sorted(ENV_CLASSES))
def test_reference_actions_reach_reward_1(server, kind):
    ref = reference(kind, "arith", 0, 21)
    env = ENV_CLASSES[kind](server.url, family="arith", level=0)
    prompt = env.reset(seed=21)
    assert isinstance(prompt, str) and len(prompt) > 20
    assert env.observation["env_id"] == ref["env_id"]
    assert env.get_reward() == 0.0
    for a in ref["actions"]:
        result = getattr(env, a["name"])(**a["arguments"])
        assert isinstance(result, str)
    assert env.done and env.get_reward() == 1.0 and env.reason is None
    assert getattr(env, ref["actions"][0]["name"])(**ref["actions"][0]["arguments"]) == "the episode is over"
    # reset starts a fresh episode on the same instance (TRL reuses instances across batches)
    env.reset(seed=22)
    assert not env.done and env.get_reward() == 0.0


def test_a_malformed_call_ends_with_reward_0_and_a_reason(server):
    env = CogenSearchEnv(server.url)
    env.reset(seed=3)
    env.call(x=[{"not": "an int"}, 1, 2, 3, 4, 5, 6])
    assert env.done and env.get_reward() == 0.0
    assert env.reason.startswith("malformed:")


def test_a_looping_program_ends_with_reward_0(server):
    env = CogenProbeEnv(server.url, family="arith")
    env.reset(seed=4)
    env.submit(program="function f(a) { while (true) {} }")
    assert env.done and env.get_reward() == 0.0
    assert env.reason.startswith("hostile:")


def test_tools_before_reset_are_an_error(server):
    with pytest.raises(RuntimeError, match="reset"):
        CogenProbeEnv(server.url).call(args=[1])
