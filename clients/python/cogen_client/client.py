"""The HTTP client for `cogen serve`. Standard library only (urllib, json, dataclasses)."""

from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from .hf import task_row

DEFAULT_URL = "http://127.0.0.1:8787"

Message = Dict[str, str]

#: The views a task is served in: "chat" (the default: chat messages for an LLM) and "compact" (the
#: built-in solver's own tokens, joined by one space, the space token written "␣"; the prompt has
#: "<sep>" before its last token, a completion is such tokens up to "<eos>"). `Cogen.tokenizer_json()` reads it.
VIEWS = ("chat", "compact")


class CogenError(Exception):
    """A request the server refused or could not answer.

    `status` is the HTTP status (None when the server could not be reached at all) and `reason`
    the server's one-line reason (its `{"error": ...}` body).
    """

    def __init__(self, reason: str, status: Optional[int] = None, path: Optional[str] = None):
        self.reason = reason
        self.status = status
        self.path = path
        where = f"{path}: " if path else ""
        code = f"HTTP {status}: " if status is not None else ""
        super().__init__(f"{where}{code}{reason}")


@dataclass
class Task:
    """One task served by the live curriculum. `prompt` is a list of chat messages, or in the compact
    view the text of the solver's tokens (`prompt_ids` then holds their ids, `<bos>` first)."""

    id: str
    type: str
    family: str
    level: int
    skills: List[str]
    prompt: Union[List[Message], str]
    answer_kind: str = "literal"
    answer_shape: str = ""
    expires_at: Optional[str] = None
    #: Fields the server sent that this client does not know (kept, not dropped).
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def messages(self) -> List[Message]:
        """The prompt as chat messages (what `tokenizer.apply_chat_template` takes)."""
        if isinstance(self.prompt, str):
            return [{"role": "user", "content": self.prompt}]
        return self.prompt

    @property
    def prompt_ids(self) -> Optional[List[int]]:
        """In the compact view, the prompt's token ids as `tokenizer_json()` reads them; else None."""
        return self.extra.get("prompt_ids")

    @classmethod
    def from_json(cls, d: Dict[str, Any], view: str = "chat") -> "Task":
        known = {"id", "type", "family", "level", "skills", "prompt", "answer_kind", "answer_shape", "expires_at"}
        prompt = d.get("prompt")
        if isinstance(prompt, str) and view != "compact":  # tolerate a plain-text prompt
            prompt = [{"role": "user", "content": prompt}]
        return cls(
            id=d["id"],
            type=d.get("type", ""),
            family=d.get("family", ""),
            level=int(d.get("level", 0)),
            skills=list(d.get("skills", [])),
            prompt=prompt if isinstance(prompt, str) else list(prompt or []),
            answer_kind=d.get("answer_kind", "literal"),
            answer_shape=d.get("answer_shape", ""),
            expires_at=d.get("expires_at"),
            extra={k: v for k, v in d.items() if k not in known},
        )

    def to_json(self) -> Dict[str, Any]:
        out = {
            "id": self.id,
            "type": self.type,
            "family": self.family,
            "level": self.level,
            "skills": self.skills,
            "prompt": self.prompt,
            "answer_kind": self.answer_kind,
            "answer_shape": self.answer_shape,
            "expires_at": self.expires_at,
        }
        out.update(self.extra)
        return out


@dataclass
class ScoreResult:
    """The verdict on one completion: reward in [0, 1], why when it is not 1, the answer extracted."""

    task_id: str
    reward: float
    reason: Optional[str] = None
    answer: str = ""

    @classmethod
    def from_json(cls, d: Dict[str, Any], task_id: str = "") -> "ScoreResult":
        return cls(
            task_id=d.get("task_id", task_id),
            reward=float(d["reward"]),
            reason=d.get("reason"),
            answer=d.get("answer", ""),
        )


class ScoreResults(List[ScoreResult]):
    """The results of one score request, in the order of the items; `replayed` is True when the
    server answered from an earlier request with the same idempotency key."""

    replayed: bool = False
    idempotency_key: str = ""


Pair = Tuple[str, str]


class Cogen:
    """A client for one `cogen serve` run, on one replica or several (docs/scale-out.md).

    >>> env = Cogen("http://127.0.0.1:8787")
    >>> env = Cogen(["http://10.0.0.1:8787", "http://10.0.0.2:8787"])  # fails over between replicas
    >>> tasks = env.sample(8)
    >>> rewards = env.score([(t.id, "ANSWER: 3") for t in tasks])
    """

    def __init__(
        self,
        base_url: Union[str, Sequence[str]] = DEFAULT_URL,
        token: Optional[str] = None,
        timeout: float = 60,
        retries: int = 4,
        backoff: float = 0.25,
        max_items: int = 1024,
    ):
        #: Every replica of the run (a list, or one string with URLs separated by commas): a request
        #: that cannot be answered by one goes to the next, with the same idempotency key.
        self.base_urls = _urls(base_url)
        self._at = 0
        self.token = token if token is not None else (os.environ.get("COGEN_TOKEN") or None)
        self.timeout = timeout
        #: How many more rounds over the replicas a retryable request (score with its key, GETs) gets.
        self.retries = retries
        self.backoff = backoff
        #: Most completions in one score request (the server's `serve.maxItems`, 1024 by default);
        #: a larger batch is sent as several requests, each task's completions kept together.
        self.max_items = max_items

    @property
    def base_url(self) -> str:
        """The replica requests go to now."""
        return self.base_urls[self._at]

    def __repr__(self) -> str:  # never shows the token
        return f"Cogen({self.base_url!r})" if len(self.base_urls) == 1 else f"Cogen({self.base_urls!r})"

    # -- transport ------------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: Optional[Dict[str, str]] = None,
        retry: bool = False,
    ) -> Any:
        """One request, sent to the replicas in turn until one answers.

        A retryable request is tried on every replica, `1 + retries` rounds, on a connection error,
        a 5xx or a 429, waiting between rounds (exponential backoff with jitter, or the server's
        Retry-After when longer). Any request goes to the next replica when the last one refused the
        connection or answered 503: neither did anything with it.
        """
        data = None if body is None else json.dumps(body).encode("utf-8")
        h = {"Accept": "application/json"}
        if data is not None:
            h["Content-Type"] = "application/json"
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        if headers:
            h.update(headers)
        n = len(self.base_urls)
        attempts = n * (1 + (self.retries if retry else 0))
        last: Optional[CogenError] = None
        wait = 0.0
        for attempt in range(attempts):
            if attempt and attempt % n == 0:
                # a whole round failed: back off (0.25, 0.5, 1, 2 s ... with jitter), or as long as the server asked
                time.sleep(max(wait, self.backoff * (2 ** (attempt // n - 1)) * (0.5 + random.random())))
                wait = 0.0
            url = self.base_urls[self._at]
            req = urllib.request.Request(url + path, data=data, headers=h, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                    ctype = resp.headers.get("Content-Type", "")
                    if "json" in ctype or raw[:1] in (b"{", b"["):
                        return json.loads(raw.decode("utf-8")) if raw else None
                    return raw.decode("utf-8")
            except urllib.error.HTTPError as e:
                err = CogenError(_reason(e), e.code, path)
                if e.code == 503 or (retry and (e.code >= 500 or e.code == 429)):
                    last = err
                    wait = max(wait, min(_retry_after(e), 30.0))
                    self._next()
                    continue
                raise err from None
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as e:
                reason = getattr(e, "reason", e)
                last = CogenError(f"cannot reach {url}: {reason}", None, path)
                refused = isinstance(reason, ConnectionRefusedError) or isinstance(e, ConnectionRefusedError)
                if not (retry or refused):
                    raise last from None
                self._next()
                continue
        assert last is not None
        raise last

    def _next(self) -> None:
        self._at = (self._at + 1) % len(self.base_urls)

    # -- the API --------------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        """GET /health: {"status": "healthy", "run_id": ...}."""
        return self._request("GET", "/health", retry=True)

    def sample(self, n: int, view: str = "chat", one_arm: bool = False) -> List[Task]:
        """n fresh tasks chosen by the live curriculum: chat-format prompts, or with view="compact"
        the built-in solver's tokens as text (see `VIEWS`). With one_arm=True all n come from the
        one arm (family, level, type) the curriculum picks first, so that a GRPO step built from
        one request does not mix arms."""
        body = {"n": int(n), **_view(view), **({"one_arm": True} if one_arm else {})}
        out = self._request("POST", "/v1/sample", body)
        return [Task.from_json(t, view) for t in out["tasks"]]

    def tokenizer_json(self) -> str:
        """GET /v1/tokenizer: the solver's vocabulary as a Hugging Face tokenizer.json text, for
        `tokenizers.Tokenizer.from_str` (a compact prompt then reads as exactly its `prompt_ids`)."""
        return json.dumps(self._request("GET", "/v1/tokenizer", retry=True), ensure_ascii=False)

    def score_detailed(self, pairs: Iterable[Pair], idempotency_key: Optional[str] = None, view: str = "chat") -> ScoreResults:
        """Scores (task_id, completion) pairs; completions for one task form one group.

        Always sends an idempotency key (a fresh uuid4 unless given) and, on a connection error or
        a 5xx, retries with the same key, so a retried request is never counted twice. A batch of
        more than `max_items` completions goes as several requests of whole groups, keyed
        `<key>/<i>`, so that retrying the whole call with the same key is still counted once.
        With view="compact" each completion is the solver's tokens as text, read up to `<eos>`.
        """
        items = [{"task_id": str(tid), "completion": str(c)} for tid, c in pairs]
        key = idempotency_key or str(uuid.uuid4())
        results = ScoreResults()
        results.idempotency_key = key
        if not items:
            return results
        chunks = _chunks_of_groups(items, self.max_items)
        out: List[Optional[ScoreResult]] = [None] * len(items)
        replayed = []
        for i, idx in enumerate(chunks):
            sub = [items[j] for j in idx]
            k = key if len(chunks) == 1 else f"{key}/{i}"
            body = {"items": sub, "idempotency_key": k, **_view(view)}
            res = self._request("POST", "/v1/score", body, headers={"Idempotency-Key": k}, retry=True)
            replayed.append(bool(res.get("replayed", False)))
            for j, r in zip(idx, res["results"]):
                out[j] = ScoreResult.from_json(r, items[j]["task_id"])
        results.extend(r for r in out if r is not None)
        if len(results) != len(items):
            raise CogenError(f"the server answered {len(results)} results for {len(items)} items", 200, "/v1/score")
        results.replayed = all(replayed)
        return results

    def score(self, pairs: Iterable[Pair], idempotency_key: Optional[str] = None, view: str = "chat") -> List[float]:
        """Rewards in [0, 1] for (task_id, completion) pairs, in order."""
        return [r.reward for r in self.score_detailed(pairs, idempotency_key, view)]

    def verify(self, task: Union[str, Dict[str, Any], Task], completion: str, view: str = "chat") -> ScoreResult:
        """Stateless scoring of any task JSON (a line of an export, a dict, or a JSON string)."""
        if isinstance(task, Task):
            task = task.to_json()
        elif isinstance(task, str):
            task = json.loads(task)
        out = self._request("POST", "/v1/verify", {"task": task, "completion": str(completion), **_view(view)}, retry=True)
        return ScoreResult.from_json(out, task_id=str(task.get("id", "")) if isinstance(task, dict) else "")

    def probes(self, view: str = "chat") -> Dict[str, Any]:
        """GET /v1/probes: {"round", "due", "tasks": [Task, ...]} (tasks parsed into `Task`)."""
        query = "?" + urllib.parse.urlencode({"view": view}) if view != "chat" else ""
        out = self._request("GET", "/v1/probes" + query, retry=True)
        out["tasks"] = [Task.from_json(t, view) for t in out.get("tasks", [])]
        return out

    def report_probes(self, round: int, answers: Union[Sequence[Pair], Dict[str, str]], view: str = "chat") -> Dict[str, Any]:
        """POST /v1/probes: the trainer's greedy answers to the probe round's tasks."""
        if isinstance(answers, dict):
            answers = list(answers.items())
        body = {"round": round, "answers": [{"task_id": str(t), "completion": str(c)} for t, c in answers], **_view(view)}
        return self._request("POST", "/v1/probes", body)

    def skills(self, view: str = "mastery") -> Any:
        """GET /v1/skills?view=mastery|frontier|timeline."""
        return self._request("GET", "/v1/skills?" + urllib.parse.urlencode({"view": view}), retry=True)

    def stats(self) -> Dict[str, Any]:
        """GET /v1/stats: the served run's counters."""
        return self._request("GET", "/v1/stats", retry=True)

    # -- trainer adapters -----------------------------------------------------------------------

    def trl_reward(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> List[float]:
        """A TRL reward function (`GRPOTrainer(reward_funcs=[env.trl_reward])`).

        The dataset's `task_id` column arrives in kwargs as a list, one per completion.
        Completions may be strings or conversations (the last assistant message is the answer).
        The view the completions are written in comes from the dataset's `view` column (which
        `as_hf_dataset(view="compact")` adds), else it is "chat".
        """
        views = kwargs.get("view") or ["chat"]
        view = views if isinstance(views, str) else views[0]
        task_ids = kwargs.get("task_id")
        if task_ids is None:
            raise ValueError("cogen trl_reward needs the dataset's `task_id` column (use env.as_dataset())")
        if len(task_ids) != len(completions):
            raise ValueError(f"cogen trl_reward: {len(task_ids)} task ids for {len(completions)} completions")
        return self.score(list(zip(task_ids, (completion_text(c) for c in completions))), view=view)

    def as_dataset(self, batch: int = 64, view: str = "chat") -> "LiveDataset":
        """An endless iterable of fresh task rows from the live curriculum:
        {"prompt": [messages], "task_id", "type", "family", "level"}; with view="compact" the
        prompt is the solver's tokens as text and the row has "view": "compact"."""
        return LiveDataset(self, batch, view)

    def as_hf_dataset(self, batch: int = 64, view: str = "chat", one_arm: bool = False):
        """The live dataset as a HuggingFace `datasets.IterableDataset` (for `GRPOTrainer(train_dataset=...)`;
        give the trainer `max_steps`, and `shuffle_dataset=False` so that tasks are not buffered).
        With one_arm=True each run of `batch` rows comes from one arm (see `sample`)."""
        from .hf import hf_dataset

        return hf_dataset(self, batch, view, one_arm)


class LiveDataset:
    """Endless iterable over fresh tasks; each iteration samples `batch` tasks at a time, lazily."""

    def __init__(self, env: Cogen, batch: int = 64, view: str = "chat"):
        if batch < 1:
            raise ValueError("batch must be >= 1")
        _view(view)
        self.env = env
        self.batch = batch
        self.view = view

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        while True:
            for t in self.env.sample(self.batch, self.view):
                yield task_row(t, self.view)


def _chunks_of_groups(items: List[Dict[str, str]], limit: int) -> List[List[int]]:
    """Item indices in requests of at most `limit` items, a task's items never split (a task with
    more than `limit` items goes alone, and the server says why it refuses it)."""
    if len(items) <= limit:
        return [list(range(len(items)))]
    groups: Dict[str, List[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(it["task_id"], []).append(i)
    chunks: List[List[int]] = []
    cur: List[int] = []
    for idx in groups.values():
        if cur and len(cur) + len(idx) > limit:
            chunks.append(cur)
            cur = []
        cur = cur + idx
    if cur:
        chunks.append(cur)
    return chunks



def _view(view: str) -> Dict[str, str]:
    """The request field of a view: nothing for "chat" (the server's default, so requests in it stay
    as they were), {"view": ...} otherwise; an unknown view is refused here, before any request."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, not {view!r}")
    return {} if view == "chat" else {"view": view}


def completion_text(c: Any) -> str:
    """A completion as text: a string as is; a conversation (list of {role, content}) gives its last
    assistant message's content (or the last message's, when no role says assistant)."""
    if isinstance(c, str):
        return c
    if isinstance(c, dict):
        return _content(c.get("content", ""))
    if isinstance(c, (list, tuple)):
        msgs = [m for m in c if isinstance(m, dict)]
        for m in reversed(msgs):
            if m.get("role") == "assistant":
                return _content(m.get("content", ""))
        return _content(msgs[-1].get("content", "")) if msgs else ""
    return "" if c is None else str(c)


def _content(x: Any) -> str:
    # content may be a list of parts ({"type": "text", "text": ...}) in multimodal chat formats
    if isinstance(x, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in x)
    return "" if x is None else str(x)


def _urls(base_url: Union[str, Sequence[str]]) -> List[str]:
    urls = base_url.split(",") if isinstance(base_url, str) else list(base_url)
    out = [u.strip().rstrip("/") for u in urls if u and u.strip()]
    if not out:
        raise ValueError("Cogen needs at least one base URL")
    return out


def _retry_after(e: urllib.error.HTTPError) -> float:
    """The server's Retry-After in seconds (0 when absent or not a number of seconds)."""
    try:
        return max(0.0, float(e.headers.get("Retry-After") or 0))
    except (TypeError, ValueError):
        return 0.0


def _reason(e: urllib.error.HTTPError) -> str:
    try:
        raw = e.read().decode("utf-8", "replace")
    except Exception:  # pragma: no cover - the body could not be read
        raw = ""
    try:
        d = json.loads(raw)
        if isinstance(d, dict) and "error" in d:
            err = d["error"]
            return err if isinstance(err, str) else json.dumps(err)
    except ValueError:
        pass
    return (raw.strip().splitlines() or [e.reason or f"HTTP {e.code}"])[0]
