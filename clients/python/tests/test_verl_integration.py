"""veRL for real: its own dataset class reads `cogen export --format parquet`, its own loader loads
`compute_score` (pkg:// and file path), and the scores are right. Needs verl (with torch, ray,
transformers); not in CI's venv, skipped without it."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import REPO_ROOT

pytest.importorskip("torch")
rl_dataset = pytest.importorskip("verl.utils.dataset.rl_dataset")
import_utils = pytest.importorskip("verl.utils.import_utils")


def test_verl_reads_the_export_and_scores_with_cogen(env, server, tmp_path, monkeypatch):
    from omegaconf import OmegaConf

    env.sample(4)
    path = server.export(tmp_path / "train.parquet", fmt="parquet")
    spec = importlib.util.spec_from_file_location("cogen_trl_example", REPO_ROOT / "examples" / "trl_grpo.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    _, tok = ex.tiny_model_and_tokenizer(["ANSWER: 0"])
    ds = rl_dataset.RLHFDataset(str(path), tok, OmegaConf.create({"max_prompt_length": 4096, "filter_overlong_prompts": False, "cache_dir": str(tmp_path / "cache")}))
    assert len(ds) >= 4
    monkeypatch.setenv("COGEN_URL", server.url)
    by_pkg = import_utils.load_extern_object("pkg://cogen_client.verl", "compute_score")
    by_file = import_utils.load_extern_object(str(REPO_ROOT / "clients" / "python" / "cogen_client" / "verl.py"), "compute_score")
    for i in range(min(len(ds), 4)):
        row = ds[i]
        assert row["raw_prompt"][-1]["role"] == "user"
        gt = row["reward_model"]["ground_truth"]
        extra = dict(row["extra_info"], num_turns=None, rollout_reward_scores={})  # what veRL's reward manager adds
        for fn in (by_pkg, by_file):
            assert fn(data_source=row["data_source"], solution_str=f"ANSWER: {gt}", ground_truth=gt, extra_info=extra) == 1.0
            assert fn(data_source=row["data_source"], solution_str='ANSWER: "surely not"', ground_truth=gt, extra_info=extra) == 0.0
