"""`cogen export --format parquet` read back the way veRL reads its datasets.

A tiny run (the smoke preset, 2 steps) is exported as parquet and opened with pandas, pyarrow and
HuggingFace `datasets`: the prompt must come back as chat messages (a list of {role, content}),
`reward_model` and `extra_info` as dicts, `row["reward_model"]["ground_truth"]` must work, and
`extra_info["task"]` must be the task's JSON text (what a veRL compute_score sends to /v1/verify).
Skipped when pandas, pyarrow or datasets is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
datasets = pytest.importorskip("datasets")

REPO_ROOT = Path(__file__).resolve().parents[3]
CLI = REPO_ROOT / "bin" / "cogen.js"
COLUMNS = ["data_source", "prompt", "ability", "reward_model", "extra_info"]


def cogen(*args: str) -> subprocess.CompletedProcess:
    exe = os.environ.get("NODE") or shutil.which("node")
    if not exe:
        pytest.fail("node is not on PATH (the test runs `node bin/cogen.js`)")
    res = subprocess.run([exe, str(CLI), *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"cogen {' '.join(args)} exited {res.returncode}: {res.stderr}"
    return res


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory):
    """(parquet path, the same tasks as jsonl records) of a 2-step smoke run."""
    tmp = tmp_path_factory.mktemp("export")
    runs = tmp / "runs"
    cogen("run", "--preset", "smoke", "--steps", "2", "--runs-dir", str(runs), "--run-id", "t", "--no-progress")
    out = tmp / "tasks.parquet"
    cogen("export", "--run", "t", "--runs-dir", str(runs), "--what", "tasks", "--format", "parquet", "--out", str(out))
    jsonl = tmp / "tasks.jsonl"
    cogen("export", "--run", "t", "--runs-dir", str(runs), "--out", str(jsonl))
    records = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert records, "the smoke run made no tasks"
    return out, records


def check_row(row, record) -> None:
    """One row as veRL sees it: messages, dicts, and the task as JSON text with the right id."""
    messages = list(row["prompt"])
    assert len(messages) >= 1
    for m in messages:
        assert isinstance(m, dict) and set(m) == {"role", "content"}
        assert isinstance(m["role"], str) and isinstance(m["content"], str)
    assert messages[0] == {"role": "user", "content": record["prompt"]}
    assert row["data_source"] == f"cogen/{record['family']}"
    assert row["ability"] == record["type"]
    assert isinstance(row["reward_model"], dict)
    assert row["reward_model"]["ground_truth"] == record["answer"]
    assert row["reward_model"]["style"] == "rule"
    info = row["extra_info"]
    assert isinstance(info, dict)
    assert info["id"] == record["id"]
    assert info["level"] == record["level"]
    assert list(info["skills"]) == record["skills"]
    task = json.loads(info["task"])
    assert task["id"] == record["id"]
    assert task["type"] == record["type"]
    assert task["program"] == record["program"]


def test_pyarrow_schema_is_nested(exported):
    path, records = exported
    table = pq.read_table(path)
    schema = table.schema
    assert schema.names == COLUMNS
    assert table.num_rows == len(records)
    prompt = schema.field("prompt").type
    assert pa.types.is_list(prompt) and pa.types.is_struct(prompt.value_type)
    assert [prompt.value_type.field(i).name for i in range(prompt.value_type.num_fields)] == ["role", "content"]
    assert pa.types.is_struct(schema.field("reward_model").type)
    info = schema.field("extra_info").type
    assert pa.types.is_struct(info)
    assert pa.types.is_string(info.field("task").type)
    assert pa.types.is_integer(info.field("index").type)
    for row, record in zip(table.to_pylist(), records):
        check_row(row, record)
    assert [r["extra_info"]["index"] for r in table.to_pylist()] == list(range(len(records)))


def test_pandas_reads_messages_and_dicts(exported):
    path, records = exported
    df = pd.read_parquet(path)
    assert list(df.columns) == COLUMNS
    assert len(df) == len(records)
    for (_, row), record in zip(df.iterrows(), records):
        check_row(row, record)


def test_datasets_reads_messages_and_dicts(exported, tmp_path):
    path, records = exported
    ds = datasets.Dataset.from_parquet(str(path), cache_dir=str(tmp_path / "hf-cache"))
    assert ds.column_names == COLUMNS
    assert len(ds) == len(records)
    for row, record in zip(ds, records):
        assert isinstance(row["prompt"], list)
        check_row(row, record)
