"""cogen's Reasoning Gym worker: generates and scores Reasoning Gym items for the Node side
(bridges/reasoning-gym.ts), one JSON object per line on stdin, one reply per line on stdout.

Requests: {"id": n, "op": "hello" | "list" | "generate" | "score" | "bench", ...}
  list                                  -> {"datasets": [{dataset, category, curriculum, levels: [config...]}]}
  generate {dataset, config, indices}   -> {"items": [{index, question, answer, entry, witness, failures}]}
  score {dataset, config, entry, answer} -> {"score": float, "reason"?: str}
  bench {dataset, config, indices, seconds} -> {"seconds": s, "items": n} (Reasoning Gym's own generate+score)
Replies: {"id": n, "ok": true, "result": ...} or {"id": n, "ok": false, "error": "one line"}.

Scoring is untrusted execution: some scorers evaluate the answer (countdown's parse_expr runs
sympy's eval). The limits below are what a plain CPython process can put on itself; the Node side
adds the wall-clock kill per request and restarts the worker after any failure.
"""

import json
import math
import os
import resource
import signal
import sys
import time

MAX_ANSWER_CHARS = int(os.environ.get("COGEN_RG_MAX_ANSWER", "65536"))
CPU_SECONDS = int(os.environ.get("COGEN_RG_CPU_SECONDS", "10"))
MEMORY_BYTES = int(os.environ.get("COGEN_RG_MEMORY_BYTES", str(4 << 30)))


class CpuLimit(Exception):
    pass


def _on_xcpu(signum, frame):
    raise CpuLimit("cpu limit")


# 1. Resource limits, set on the process itself before anything else runs. RLIMIT_AS caps memory
# (a MemoryError inside a scorer scores 0); RLIMIT_CPU's soft limit is moved per request (SIGXCPU
# raises CpuLimit between bytecodes; a hang inside C code is left to the Node side's kill);
# RLIMIT_FSIZE 0 makes every write to a regular file fail in the kernel (EFBIG), pipes excepted.
resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
signal.signal(signal.SIGXCPU, _on_xcpu)

# 2. The protocol's stdout is a private copy of fd 1; fd 1 itself goes to stderr, so a generator or
# scorer that prints cannot corrupt the reply stream.
_proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr

# 3. No network: socket creation and the name lookups raise before any scorer is imported. This is
# a Python-level fence, not a kernel one (a C extension or ctypes could open a socket); it was
# chosen because a network namespace (unshare -n) needs privileges a user's machine may not grant,
# and the audit hook below closes the Python paths a scorer's eval can reach.
import socket  # noqa: E402


def _no_network(*args, **kwargs):
    raise OSError("network access is disabled in cogen's Reasoning Gym worker")


class _NoSocket(socket.socket):
    """Stays a class (ssl subclasses socket.socket at import), but no instance can be made."""

    def __init__(self, *args, **kwargs):
        _no_network()


socket.socket = _NoSocket  # type: ignore[misc]
socket.create_connection = _no_network  # type: ignore[assignment]
socket.getaddrinfo = _no_network  # type: ignore[assignment]
socket.socketpair = _no_network  # type: ignore[assignment]

import dataclasses  # noqa: E402
import datetime  # noqa: E402
import enum  # noqa: E402
import types  # noqa: E402
import typing  # noqa: E402

import reasoning_gym  # noqa: E402,F401  (imports every dataset module, so later scoring reads no new package files)
from reasoning_gym.coaching.base_curriculum import DefaultCurriculumContext, RangeAttributeMode  # noqa: E402
from reasoning_gym.factory import CURRICULA, DATASETS, create_curriculum  # noqa: E402

# 4. After the imports: an audit hook (PEP 578) refuses what an evaluated answer could do through
# Python: start processes, open sockets, load native libraries, write or delete files, and read
# files outside the Python installation and this worker's empty temp cwd (so the run's store,
# checkpoints and the user's files stay out of reach of Python code). Audit hooks cannot be removed
# from Python; they are not a sandbox against native code (a C extension can skip them), which is
# why the kernel-level limits above and the Node side's kill and restart stay in place.
_READ_ROOTS = tuple(
    os.path.realpath(p) + os.sep for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, os.getcwd(), "/dev/null", "/proc/self"}
)
_BLOCKED = {
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill", "os.killpg",
    "subprocess.Popen", "pty.spawn", "socket.__new__", "socket.connect", "socket.bind", "socket.getaddrinfo",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.addressof", "ctypes.cdata", "ctypes.call_function",
    "os.remove", "os.unlink", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
    "os.symlink", "os.link", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move",
    "os.putenv", "os.unsetenv", "sys.addaudithook", "os.chdir", "os.setuid", "os.setgid",
    "webbrowser.open", "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect",
}
_READ_EVENTS = {"open", "os.listdir", "os.scandir", "glob.glob", "os.walk"}


def _allowed_path(path) -> bool:
    if isinstance(path, int):  # an already-open descriptor
        return True
    try:
        p = os.path.realpath(os.fsdecode(path))
    except Exception:
        return False
    return any((p + os.sep).startswith(root) for root in _READ_ROOTS)


def _audit(event, args):
    if event in _BLOCKED or event.startswith("ctypes."):
        raise PermissionError(f"{event} is not allowed in cogen's Reasoning Gym worker")
    if event in _READ_EVENTS:
        path = args[0] if args else None
        if event == "open" and len(args) > 1 and isinstance(args[1], str) and any(c in args[1] for c in "wax+"):
            raise PermissionError("writing files is not allowed in cogen's Reasoning Gym worker")
        if event == "open" and len(args) > 2 and isinstance(args[2], int) and args[2] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise PermissionError("writing files is not allowed in cogen's Reasoning Gym worker")
        if path is not None and not _allowed_path(path):
            raise PermissionError(f"reading {os.fsdecode(path) if not isinstance(path, int) else path} is not allowed in cogen's Reasoning Gym worker")


# Not a dataset: it mixes others.
SKIP = {"composite"}
# The index space of a level (an item is (dataset, config, index)); acre precomputes its whole
# dataset in its constructor, so it keeps its own default size.
INDEX_SPACE = 1 << 20
OWN_SIZE = {"acre"}

_instances: dict = {}


def _plain(o):
    if isinstance(o, (datetime.date, datetime.time)):
        return o.isoformat()
    if isinstance(o, enum.Enum):
        return o.value
    if isinstance(o, (set, frozenset)):
        return sorted(o, key=repr)
    if isinstance(o, tuple):
        return list(o)
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return dataclasses.asdict(o)
    return str(o)


def to_json(x):
    """Plain JSON data: tuples and sets become lists, enums their value, other objects their text."""
    return json.loads(json.dumps(x, default=_plain))


def encode_entry(x):
    """An entry as JSON that decodes back to the same Python values: tuples, sets and dicts with
    keys that are not text are tagged (a scorer may compare the answer with a tuple of tuples)."""
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            return {k: encode_entry(v) for k, v in x.items()}
        return {"__dict__": [[encode_entry(k), encode_entry(v)] for k, v in x.items()]}
    if isinstance(x, tuple):
        return {"__tuple__": [encode_entry(v) for v in x]}
    if isinstance(x, (set, frozenset)):
        return {"__set__": [encode_entry(v) for v in sorted(x, key=repr)]}
    if isinstance(x, list):
        return [encode_entry(v) for v in x]
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else str(x)
    return _plain(x) if not isinstance(x, (dict, list, tuple)) else x


def decode_entry(x):
    if isinstance(x, list):
        return [decode_entry(v) for v in x]
    if isinstance(x, dict):
        if len(x) == 1:
            (k, v), = x.items()
            if k == "__tuple__" and isinstance(v, list):
                return tuple(decode_entry(y) for y in v)
            if k == "__set__" and isinstance(v, list):
                return {decode_entry(y) for y in v}
            if k == "__dict__" and isinstance(v, list):
                return {decode_entry(a): decode_entry(b) for a, b in v}
        return {k: decode_entry(v) for k, v in x.items()}
    return x


def from_json(tp, value):
    """A config field back from JSON, by its annotation: enums, nested dataclasses and tuples again."""
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            if arg is type(None):
                continue
            try:
                return from_json(arg, value)
            except Exception:
                continue
        return value
    if origin in (tuple, list, set, frozenset) and isinstance(value, list):
        args = typing.get_args(tp)
        if origin is tuple and args and args[-1] is not Ellipsis and len(args) == len(value):
            return tuple(from_json(a, v) for a, v in zip(args, value))
        inner = args[0] if args else typing.Any
        return origin(from_json(inner, v) for v in value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if tp in (datetime.date, datetime.datetime, datetime.time) and isinstance(value, str):
        return tp.fromisoformat(value)
    if dataclasses.is_dataclass(tp) and isinstance(value, dict):
        hints = typing.get_type_hints(tp)
        return tp(**{f.name: from_json(hints.get(f.name, typing.Any), value[f.name]) for f in dataclasses.fields(tp) if f.name in value})
    return value


def _category(cls) -> str:
    parts = cls.__module__.split(".")
    return parts[1] if len(parts) >= 3 else "other"


def dataset(name: str, config: dict):
    key = (name, json.dumps(config, sort_keys=True))
    d = _instances.get(key)
    if d is None:
        if name not in DATASETS or name in SKIP:
            raise ValueError(f"unknown Reasoning Gym dataset '{name}'")
        dataset_cls, config_cls = DATASETS[name]
        d = dataset_cls(config=from_json(config_cls, config))
        if len(_instances) > 512:
            _instances.clear()
        _instances[key] = d
    return d


def level_config(name: str, config_cls, level: int | None) -> dict:
    """The config of a level (level None: the default config), with seed 0 and the index space as size.
    A dataset that refuses the large index space (it precomputes, or checks size against its
    constraints) keeps its own default size."""
    fields = {f.name for f in dataclasses.fields(config_cls)}
    defaults = {"seed": 0} if "seed" in fields else {}
    sizes = [INDEX_SPACE, None] if "size" in fields and name not in OWN_SIZE else [None]
    # RG's default context (a level's ranges include the easier levels'); where that config fails
    # RG's own validation (knight_swap's lowest node count), the level's own range alone.
    contexts = [None, DefaultCurriculumContext(mode=RangeAttributeMode.UPPER_BOUND)] if level is not None else [None]
    attempts = [(size, ctx) for ctx in contexts for size in sizes]
    for i, (size, ctx) in enumerate(attempts):
        if size is not None:
            defaults["size"] = size
        else:
            defaults.pop("size", None)
        if level is None:
            cfg = to_json(dataclasses.asdict(config_cls(**defaults)))
        else:
            cur = create_curriculum(name)
            cur.set_global_level(level)
            cfg = to_json(dataclasses.asdict(cur.generate_configuration(defaults, ctx)))
        try:
            dataset(name, cfg)
            return cfg
        except Exception:
            if i == len(attempts) - 1:
                raise
    raise AssertionError("unreachable")


def op_list(_req):
    """Every dataset and its ladder: one config per curriculum level that constructs (RG's own
    curricula have levels whose config fails its own validation; those are skipped and named)."""
    out = []
    for name, (dataset_cls, config_cls) in sorted(DATASETS.items()):
        if name in SKIP:
            continue
        entry = {"dataset": name, "category": _category(dataset_cls), "curriculum": name in CURRICULA, "levels": [], "skipped": [], "doc": (dataset_cls.__doc__ or "").strip().split("\n")[0][:200]}
        if name in CURRICULA:
            cur = create_curriculum(name)
            steps = list(range(max((len(a.levels) for a in cur.attributes.values()), default=1)))
        else:
            steps = [None]
        for level in steps:
            try:
                entry["levels"].append(level_config(name, config_cls, level))
            except Exception as e:
                entry["skipped"].append(f"RG level {level}: {type(e).__name__}: {str(e)[:160]}")
        out.append(entry)
    return {"datasets": out}


def _score(d, answer, entry) -> tuple[float, str | None]:
    if not isinstance(answer, str):
        return 0.0, "the answer is not text"
    if len(answer) > MAX_ANSWER_CHARS:
        return 0.0, f"the answer is longer than {MAX_ANSWER_CHARS} characters"
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(used.ru_utime + used.ru_stime) + CPU_SECONDS
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))
    try:
        s = d.score_answer(answer, entry)
    except CpuLimit:
        return 0.0, "cpu limit"
    except MemoryError:
        return 0.0, "memory limit"
    except RecursionError:
        return 0.0, "recursion limit"
    except Exception as e:
        return 0.0, f"the scorer raised {type(e).__name__}"
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    try:
        s = float(s)
    except Exception:
        return 0.0, "the scorer returned no number"
    if not math.isfinite(s):
        return 0.0, "the scorer returned no finite number"
    return min(1.0, max(0.0, s)), None


def near_misses(answer: str) -> list[str]:
    """Answers close to the reference that a real verifier rejects: empty, one character changed, truncated, padded."""
    out = ["", answer + " 1"]
    digits = [i for i, c in enumerate(answer) if c.isdigit()]
    if digits:
        i = digits[-1]
        out.append(answer[:i] + str((int(answer[i]) + 1) % 10) + answer[i + 1:])
    elif answer:
        c = answer[-1]
        out.append(answer[:-1] + ("x" if c != "x" else "y"))
    if len(answer) > 1:
        out.append(answer[: len(answer) // 2])
    return [a for a in dict.fromkeys(out) if a != answer]


def op_generate(req):
    name, config = req["dataset"], req["config"]
    d = dataset(name, config)
    items = []
    for index in req["indices"]:
        try:
            raw = d[int(index)]
        except Exception as e:  # some generators give up on some seeds: that item is not served
            items.append({"index": index, "question": None, "answer": None, "entry": {}, "witness": 0.0, "witnessReason": f"generating it raised {type(e).__name__}: {str(e)[:120]}", "failures": []})
            continue
        # The entry the scorer will see later is this JSON round trip, so the witness is checked on it.
        encoded = to_json(encode_entry(raw))
        entry = decode_entry(encoded)
        answer = entry.get("answer")
        item = {"index": index, "question": entry.get("question"), "answer": answer, "entry": encoded}
        if isinstance(answer, str):
            item["witness"], reason = _score(d, answer, entry)
            if reason:
                item["witnessReason"] = reason
            fails = []
            for a in near_misses(answer):
                s, _ = _score(d, a, entry)
                if s < 1:
                    fails.append(a)
                if len(fails) == 3:
                    break
            item["failures"] = fails
        else:
            item["witness"], item["witnessReason"] = 0.0, "the item's answer is not text"
            item["failures"] = []
        items.append(item)
    return {"items": items}


def op_score(req):
    d = dataset(req["dataset"], req["config"])
    s, reason = _score(d, req.get("answer"), decode_entry(req["entry"]))
    return {"score": s, **({"reason": reason} if reason else {})}


def op_bench(req):
    """Reasoning Gym's own speed, in this process: generate n items and score each reference answer."""
    name, config = req["dataset"], req["config"]
    d = dataset(name, config)
    t0 = time.perf_counter()
    done = 0
    deadline = t0 + float(req.get("seconds", 2.0))
    failed = 0
    for i in req["indices"]:
        try:
            e = d[int(i)]
            d.score_answer(e["answer"], e)
            done += 1
        except Exception:  # some generators give up on some seeds (tsumego): time spent, no item
            failed += 1
        if time.perf_counter() > deadline:
            break
    return {"seconds": time.perf_counter() - t0, "items": done, "failed": failed}


OPS = {
    "hello": lambda _r: {"reasoning_gym": _version(), "python": sys.version.split()[0], "pid": os.getpid()},
    "list": op_list,
    "generate": op_generate,
    "score": op_score,
    "bench": op_bench,
    # For the tests of the Node side's timeout: a request that never answers.
    "hang": lambda _r: time.sleep(3600),
}


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("reasoning-gym")
    except Exception:
        return "unknown"


def main():
    _version()  # reads package metadata now, before the audit hook fences file reads
    sys.addaudithook(_audit)
    sys.setrecursionlimit(5000)
    _proto.write(json.dumps({"id": 0, "ok": True, "result": {"ready": True}}) + "\n")
    for line in sys.stdin:
        try:
            req = json.loads(line)
            rid = req.get("id")
        except Exception:
            _proto.write(json.dumps({"id": None, "ok": False, "error": "the request is not a JSON line"}) + "\n")
            continue
        try:
            op = OPS.get(req.get("op"))
            if op is None:
                raise ValueError(f"unknown op {req.get('op')!r}")
            reply = {"id": rid, "ok": True, "result": op(req)}
        except Exception as e:
            reply = {"id": rid, "ok": False, "error": f"{type(e).__name__}: {str(e)[:300]}".replace("\n", " ")}
        _proto.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    main()
