"""envkit, rl-envdoctor and bohrin side by side on one bed: per case caught / missed / could
not run (why), and wall time.

    python bench/peers.py [--bed reverse,zoo,field,corpus] [--rule NAME ...] [--jobs N]
                          [--json bench/data/peers.json]

The peers install from the package index into venvs of their own under
``~/.cache/envkit-bench/peers/NAME`` (never dependencies of envkit): rl-envdoctor 0.1.0 (with
verifiers 0.4.0, to read tasksets) and bohrin 0.3.0, its text-grader release (0.4.x probes code
graders). The bed:

- ``reverse``: the "reverse the word" verifiers v1 taskset
  (tests/importers/fixtures/vf_v1/reverse_word_taskset.py) and five defective variants made
  here (a leak, a substring checker, a right-word-anywhere checker, 0.35 for any reply, a
  crash). envkit validates each as ``envkit import`` makes it an OpenEnv environment;
  rl-envdoctor scans the taskset itself; bohrin's battery is graded through the imported
  environment.
- ``zoo``: rl-envdoctor's self-test set (``envdoctor.zoo.SPECIMENS``: 15 defective, 8 healthy
  graders), read from the installed package and wrapped at run time in a one-step OpenEnv
  environment (``answer`` in, the specimen's reward out; nothing of it is copied here).
- ``field`` and ``corpus``: tests/corpus/field/ and the per-rule corpora, served as they are.

How each tool reads an OpenEnv case. envkit plays the server: a per-rule corpus case as the
corpus test plays it (its rule selected, tests/corpus/corpus.py), every other case with all
runtime rules (EK4xx, EK5xx); caught means a finding at warning or above (for a case with a
code, that code). The peers read a reward function, not a server: a case whose action is one
text field and whose oracle episode is one step becomes a plain reward function
(``reward(completion)`` = reset the row's seed, step the text, the step's reward) over rows
made of each seed's first observation (the prompt) and the oracle's text (the answer), served
to the peer's venv over HTTP (bench/_peer_driver.py). Any other case could not run, with the
reason.

Cases play ``--jobs`` at a time (default 2); the JSON keeps every row (bench/field_coverage.py reads
it to write docs/coverage.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.corpus.corpus import (  # noqa: E402 - after the repository is importable
    REPORTED_AS,
    cases,
    play,
    servers_without_gradio,
)

PEERS_HOME = Path(os.environ.get("ENVKIT_PEERS_HOME", Path.home() / ".cache/envkit-bench/peers"))
PEERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "rl-envdoctor": ("rl-envdoctor", ("rl-envdoctor==0.1.0", "verifiers==0.4.0")),
    "bohrin": ("bohrin-0.3.0", ("bohrin==0.3.0",)),
}
"""Peer -> (its venv's folder under :data:`PEERS_HOME`, the venv's requirements)."""
TOOLS = ("envkit", "rl-envdoctor", "bohrin")
FIELD = REPO / "tests" / "corpus" / "field"
REVERSE = REPO / "tests" / "importers" / "fixtures" / "vf_v1" / "reverse_word_taskset.py"
RESULTS = REPO / "bench" / "data" / "peers.json"


# -- the peers' venvs -------------------------------------------------------------------------
def venv_python(folder: str, requirements: tuple[str, ...]) -> Path:
    """The interpreter of the venv ``PEERS_HOME/folder`` holding ``requirements``, made and
    filled from the package index on first use (and remade when the requirements change)."""
    venv = PEERS_HOME / folder
    python = venv / "bin" / "python"
    marker = venv / ".complete"
    if not marker.is_file() or marker.read_text().split() != list(requirements):
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *requirements],
            check=True,
            capture_output=True,
        )
        marker.write_text("\n".join(requirements) + "\n")
    return python


def peer_python(name: str) -> Path:
    """The interpreter of peer ``name``'s venv (:data:`PEERS`)."""
    return venv_python(*PEERS[name])


def peer_version(name: str) -> str:
    dist = {"rl-envdoctor": "rl-envdoctor", "bohrin": "bohrin"}[name]
    out = subprocess.run(
        [
            str(peer_python(name)),
            "-c",
            f"import importlib.metadata as m; print(m.version({dist!r}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def peer_package_dir(name: str, package: str) -> Path:
    out = subprocess.run(
        [
            str(peer_python(name)),
            "-c",
            f"import {package}, os; print(os.path.dirname({package}.__file__))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def run_peer(tool: str, request: dict[str, Any]) -> dict[str, Any]:
    """The peer's verdict on one grader (bench/_peer_driver.py in its venv)."""
    proc = subprocess.run(
        [str(peer_python(tool)), str(REPO / "bench" / "_peer_driver.py")],
        input=json.dumps({"tool": {"rl-envdoctor": "envdoctor"}.get(tool, tool), **request}),
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{tool} failed: {last[:200]}")
    return json.loads(proc.stdout)


# -- the grader service: a case's reward function, over HTTP for the peers' venvs -------------
class Graders:
    """``POST /NAME`` with ``{"row", "completion"}`` -> ``{"reward"}`` (or ``{"error"}``) for
    every grader registered under NAME; one loopback server for the whole run."""

    def __init__(self) -> None:
        self._fns: dict[str, Callable[[str, str], float]] = {}
        graders = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fn = graders._fns[self.path.strip("/")]
                try:
                    answer: dict[str, Any] = {"reward": fn(body["row"], body["completion"])}
                except Exception as exc:  # noqa: BLE001 - the peer reads it as a raise
                    answer = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @contextmanager
    def serving(self, name: str, fn: Callable[[str, str], float]) -> Iterator[str]:
        self._fns[name] = fn
        try:
            yield f"http://127.0.0.1:{self._server.server_port}/{name}"
        finally:
            self._fns.pop(name, None)

    def close(self) -> None:
        self._server.shutdown()


# -- one OpenEnv case as a text grader ---------------------------------------------------------
class CannotRun(Exception):
    """A peer cannot read this case (the message says why)."""


def _prompt(observation: dict[str, Any]) -> str:
    skip = {"reward", "done", "metadata"}
    parts = [
        f"{k}: {v}" if isinstance(v, str) else f"{k}: {json.dumps(v)}"
        for k, v in observation.items()
        if k not in skip and v not in (None, "", [], {})
    ]
    return "\n".join(parts)


@contextmanager
def text_grader(root: Path, python: str) -> Iterator[tuple[list[dict[str, str]], Callable]]:
    """Serve the environment at ``root`` and yield ``(rows, reward(row, completion))``.

    Raises:
        CannotRun: the action is not one text field, or the oracle's episode is not one step.
    """
    import httpx

    from envkit.envdir import EnvDir
    from envkit.policy import PolicyProcess
    from envkit.server import start_server
    from envkit.wire import EnvSession

    env = EnvDir(root)
    if env.manifest_error is not None:
        raise CannotRun(f"the manifest does not read: {env.manifest_error}")
    knobs = env.spec
    if not knobs.oracle:
        raise CannotRun("no oracle: no reference answer to calibrate against")
    server = start_server(root, env.require_manifest().app, python=python)
    oracle = None
    try:
        server.wait_healthy(timeout_s=float(knobs.startup_timeout_s or 90))
        schema = httpx.get(server.url + "/schema", timeout=30).json()
        props = {
            k: v
            for k, v in (schema.get("action") or {}).get("properties", {}).items()
            if k != "metadata"
        }
        required = set((schema.get("action") or {}).get("required", []))
        texts = [k for k, v in props.items() if v.get("type") == "string"]
        if len(texts) != 1 or required - set(texts):
            raise CannotRun(f"the action is not one text field ({', '.join(props) or 'none'})")
        field_name = texts[0]
        # A first reset may start a worker (an imported taskset's) and hold the server's
        # event loop for a while: warm it over HTTP before WebSocket sessions ping.
        with suppress(httpx.HTTPError):
            httpx.post(server.url + "/reset", json={"seed": 0}, timeout=300)
        oracle = PolicyProcess(knobs.oracle, root, python, timeout_s=180)
        rows: list[dict[str, str]] = []
        seeds: dict[str, int] = {}
        for seed in list(knobs.seeds or [0, 1, 2])[:8]:
            with EnvSession(server.url, timeout_s=60) as session:
                first = session.reset(seed=seed)
                action = oracle(first.observation)
                after = session.step(action)
            if not after.done:
                raise CannotRun("the oracle's episode is longer than one step")
            answer = action.get(field_name)
            if not isinstance(answer, str):
                raise CannotRun("the oracle's answer is not text")
            rows.append({"id": str(seed), "prompt": _prompt(first.observation), "answer": answer})
            seeds[str(seed)] = seed

        def reward(row: str, completion: str) -> float:
            with EnvSession(server.url, timeout_s=30) as session:
                session.reset(seed=seeds[row])
                result = session.step({field_name: completion})
            if result.reward is None:
                raise ValueError("the step's reward is null")
            return float(result.reward)

        yield rows, reward
    finally:
        if oracle is not None:
            oracle.close()
        server.stop()


# -- the bed -----------------------------------------------------------------------------------
@dataclass
class Item:
    """One case of the bed."""

    bed: str  # reverse | zoo | field | corpus
    key: str
    kind: str  # defect | nearmiss (a healthy variant counts as a near-miss)
    root: Path | None  # the OpenEnv environment (None until made)
    python: str
    code: str = ""  # the code envkit must report (empty: any finding at warning or above)
    external: str = ""  # the external class (field cases)
    taskset: dict[str, Any] | None = None  # rl-envdoctor's own way in, when it has one
    why: str = ""


@dataclass
class Verdict:
    tool: str
    verdict: str  # caught | missed | could-not-run (for a near-miss: quiet | noise)
    detail: str
    seconds: float


@dataclass
class Row:
    bed: str
    key: str
    kind: str
    external: str
    code: str
    verdicts: dict[str, Verdict] = field(default_factory=dict)


def _judge(kind: str, loud: bool) -> str:
    if kind == "defect":
        return "caught" if loud else "missed"
    return "noise" if loud else "quiet"


def run_envkit(item: Item, work: Path) -> Verdict:
    """envkit's verdict on ``item`` (see the module's docstring)."""
    from envkit.findings import Severity
    from envkit.validation import validate

    t0 = time.perf_counter()
    if item.bed == "corpus":
        case = next(c for c in cases() if c.key == item.key)
        found = play(case, work, item.python)
        stand_ins = set(REPORTED_AS.get(case.key, ((), ""))[0])
        loud = bool(found & ({case.code} | stand_ins))
        detail = ",".join(sorted(found)) or "no finding"
    else:
        assert item.root is not None
        copy = work / f"{item.bed}__{item.key.replace('/', '__')}"
        shutil.copytree(item.root, copy, ignore=shutil.ignore_patterns(".venv"))
        venv = item.root / ".venv"
        if venv.is_dir():
            (copy / ".venv").symlink_to(venv)
        report = validate(copy, python=item.python, select=["EK4", "EK5"], train_path=False)
        codes = {
            f.code for f in report.findings if f.severity in (Severity.ERROR, Severity.WARNING)
        }
        loud = item.code in codes if item.code and item.kind == "defect" else bool(codes)
        detail = ",".join(sorted(codes)) or "no finding"
    return Verdict("envkit", _judge(item.kind, loud), detail, time.perf_counter() - t0)


def run_peers(item: Item, graders: Graders) -> dict[str, Verdict]:
    """Both peers' verdicts on ``item`` (one server start for both)."""
    out: dict[str, Verdict] = {}
    t0 = time.perf_counter()
    if item.taskset is not None:
        try:
            v = run_peer("rl-envdoctor", {"name": item.key, **item.taskset})
            out["rl-envdoctor"] = Verdict(
                "rl-envdoctor",
                _judge(item.kind, v["caught"]),
                v["detail"],
                time.perf_counter() - t0,
            )
        except Exception as exc:  # noqa: BLE001 - recorded per case
            out["rl-envdoctor"] = Verdict("rl-envdoctor", "could-not-run", str(exc), 0.0)
    wanted = [t for t in ("rl-envdoctor", "bohrin") if t not in out]
    assert item.root is not None
    try:
        with (
            text_grader(item.root, item.python) as (rows, reward),
            graders.serving(item.key.replace("/", "__"), reward) as url,
        ):
            for tool in wanted:
                t1 = time.perf_counter()
                try:
                    v = run_peer(tool, {"name": item.key, "grader_url": url, "rows": rows})
                    verdict = Verdict(
                        tool,
                        _judge(item.kind, v["caught"]),
                        v["detail"],
                        time.perf_counter() - t1,
                    )
                except Exception as exc:  # noqa: BLE001 - recorded per case
                    verdict = Verdict(tool, "could-not-run", str(exc)[:200], 0.0)
                out[tool] = verdict
    except CannotRun as exc:
        for tool in wanted:
            out[tool] = Verdict(tool, "could-not-run", str(exc), 0.0)
    except Exception as exc:  # noqa: BLE001 - a case that does not start is recorded
        for tool in wanted:
            out[tool] = Verdict(tool, "could-not-run", f"{type(exc).__name__}: {exc}"[:200], 0.0)
    return out


# -- making the bed ----------------------------------------------------------------------------
REVERSE_VARIANTS: dict[str, tuple[str, str, str]] = {
    # name: (kind, what is wrong, the reward's body or the prompt's change)
    "correct": ("nearmiss", "exact match (the fixture as written)", ""),
    "leak": (
        "defect",
        "the prompt carries the reversed word (a worked example that is the answer)",
        "PROMPT",
    ),
    "substring": (
        "defect",
        "any reply containing the answer is paid",
        "return 1.0 if self.data.answer in trace.last_reply else 0.0",
    ),
    "word_anywhere": (
        "defect",
        "the right word anywhere among others is paid",
        "return 1.0 if self.data.answer in trace.last_reply.split() else 0.0",
    ),
    "any_reply_035": (
        "defect",
        "0.35 for any non-empty reply",
        (
            "return 1.0 if trace.last_reply == self.data.answer else "
            "(0.35 if trace.last_reply.strip() else 0.0)"
        ),
    ),
    "crash": (
        "defect",
        "the reward raises on an empty reply",
        "return 1.0 if trace.last_reply.split()[0] == self.data.answer else 0.0",
    ),
}
_EXACT = "return 1.0 if trace.last_reply == self.data.answer else 0.0"
_PROMPT = 'prompt=f"Reverse the word: {w}. Reply with the reversed word only."'


def reverse_source(variant: str) -> str:
    """The taskset module of ``variant`` (the fixture, with one line changed)."""
    text = REVERSE.read_text(encoding="utf-8")
    _kind, _why, change = REVERSE_VARIANTS[variant]
    if change == "PROMPT":
        leaked = (
            'prompt=f"Reverse the word: {w}. Reply with the reversed word only. '
            'Example of the expected reply: {w[::-1]}"'
        )
        assert _PROMPT in text
        return text.replace(_PROMPT, leaked)
    if change:
        assert _EXACT in text
        return text.replace(_EXACT, change)
    return text


def reverse_bed(work: Path) -> list[Item]:
    """The six variants: each made a verifiers v1 package (``vf-init``), imported with
    ``envkit import`` and installed (tests/importers' helpers, cached venvs)."""
    from tests.importers.conftest import build_imported
    from tests.importers.test_verifiers_v1 import vf_init

    def one(variant: str) -> Item:
        kind, why, _change = REVERSE_VARIANTS[variant]
        # One project name for all (vf-init names the Taskset class after it), a folder each.
        src = work / "vf-src" / variant
        src.mkdir(parents=True)
        project = vf_init(src, "reverse-word")
        taskset = project / "reverse_word" / "taskset.py"
        taskset.write_text(reverse_source(variant), encoding="utf-8")
        parent = work / "vf-imported" / variant
        imported = build_imported(parent, f"verifiers:{project}", "reverse-word")
        return Item(
            "reverse",
            variant,
            kind,
            imported.path,
            imported.python,
            why=why,
            taskset={"taskset": "reverse_word.taskset::ReverseWordTaskset", "path": [str(project)]},
        )

    with ThreadPoolExecutor(max_workers=2) as pool:
        items = list(pool.map(one, REVERSE_VARIANTS))
    return items


ZOO_APP = '''"""rl-envdoctor's zoo specimen {name!r} as a one-step OpenEnv environment (made by
bench/peers.py at run time from the installed package)."""
import sys
from typing import Any, Optional

sys.path.insert(0, {shim!r})

from envdoctor.zoo import SPECIMENS  # noqa: E402
from envdoctor.targets.function import FunctionTarget  # noqa: E402
from openenv.core.env_server.http_server import create_app  # noqa: E402
from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.types import Action, Observation, State  # noqa: E402

SPECIMEN = next(s for s in SPECIMENS if s.name == {name!r})
TARGET = FunctionTarget(SPECIMEN.reward, SPECIMEN.cases, name=SPECIMEN.name)


class AnswerAction(Action):
    answer: str = ""


class PromptObservation(Observation):
    prompt: str = ""
    case_id: str = ""  # which row: several rows share a prompt (label_set_in_prompt)


class SpecimenEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id="", step_count=0)
        self._case = SPECIMEN.cases[0]
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PromptObservation:
        self._case = SPECIMEN.cases[(seed or 0) % len(SPECIMEN.cases)]
        self._state = State(episode_id=episode_id or "", step_count=0)
        self._done = False
        return PromptObservation(prompt=str(self._case.prompt), case_id=str(self._case.id))

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PromptObservation:
        if self._done:  # one answer an episode: a finished episode pays nothing more
            return PromptObservation(prompt=str(self._case.prompt), done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        score = TARGET.score(self._case, action.answer)
        if score.error:
            raise RuntimeError(score.error)
        return PromptObservation(prompt=str(self._case.prompt), done=True, reward=score.reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """The row's reference answer, as is or in the answer tags its prompt asks for: the
    rendering the specimen's own grader scores best."""
    case = next(c for c in SPECIMEN.cases if str(c.id) == observation["case_id"])
    forms = [str(case.answer), "<answer>" + str(case.answer) + "</answer>"]
    return {{"answer": max(forms, key=lambda f: TARGET.score(case, f).reward or 0.0)}}


app = create_app(SpecimenEnv, AnswerAction, PromptObservation, env_name={name!r},
                 max_concurrent_envs=8)
'''

ZOO_MANIFEST = """spec_version: 1
name: {name}
version: 0.1.0
type: space
runtime: fastapi
app: server.app:app
port: 8000

validation:
  reward:
    range: [0.0, 1.0]
    oracle_tolerance: 0.0
    floor_margin: 0.1
  resources:
    cpu: 1
    memory_mb: 1024
    disk_mb: 1024
    episode_timeout_s: 60
  capabilities:
    verifier: {{kind: reward_channel}}
  types:
    tags: [bench]

envkit:
  oracle: server.app:policy
  max_steps: 1
  seeds: [{seeds}]
  step_timeout_s: 5.0
  startup_timeout_s: 90
"""


_ZOO_LISTING = (
    "import json; from envdoctor.zoo import SPECIMENS as S; "
    "print(json.dumps([[s.name, s.healthy, s.expects, s.why, len(s.cases)] for s in S]))"
)


def zoo_bed(work: Path) -> list[Item]:
    """rl-envdoctor's specimens, each wrapped in an environment under ``work`` that imports
    ``envdoctor.zoo`` from the installed package (a folder holding only a link to it)."""
    package = peer_package_dir("rl-envdoctor", "envdoctor")
    shim = work / "envdoctor-shim"
    shim.mkdir(parents=True, exist_ok=True)
    with suppress(FileExistsError):
        (shim / "envdoctor").symlink_to(package)
    listing = subprocess.run(
        [
            str(peer_python("rl-envdoctor")),
            "-c",
            _ZOO_LISTING,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    items = []
    for name, healthy, expects, why, n in json.loads(listing.stdout):
        root = work / "zoo" / name
        (root / "server").mkdir(parents=True)
        (root / "server" / "__init__.py").write_text("")
        (root / "server" / "app.py").write_text(ZOO_APP.format(name=name, shim=str(shim)))
        seeds = ", ".join(str(i) for i in range(n))
        (root / "openenv.yaml").write_text(
            ZOO_MANIFEST.format(name=name.replace("_", "-"), seeds=seeds)
        )
        kind = "nearmiss" if healthy else "defect"
        items.append(
            Item(
                "zoo",
                name,
                kind,
                root,
                sys.executable,
                external=f"rl-envdoctor:{expects or 'healthy'}",
                why=why,
            )
        )
    return items


def field_bed() -> list[Item]:
    items = []
    for toml in sorted(FIELD.glob("*/*/case.toml")):
        meta = tomllib.loads(toml.read_text(encoding="utf-8"))
        items.append(
            Item(
                "field",
                f"{toml.parent.parent.name}/{toml.parent.name}",
                str(meta["kind"]),
                toml.parent,
                sys.executable,
                code=str(meta.get("code", "") or ""),
                external=str(meta.get("external", "")),
                why=str(meta.get("mechanism", "")),
            )
        )
    return items


def corpus_bed(rules: list[str]) -> list[Item]:
    return [
        Item("corpus", c.key, c.kind, c.path, sys.executable, code=c.code, why=c.mechanism)
        for c in cases()
        if not rules or c.rule in rules
    ]


# -- the run -----------------------------------------------------------------------------------
def play_item(item: Item, work: Path, graders: Graders) -> Row:
    row = Row(item.bed, item.key, item.kind, item.external, item.code)
    try:
        row.verdicts["envkit"] = run_envkit(item, work)
    except Exception as exc:  # noqa: BLE001 - recorded per case
        row.verdicts["envkit"] = Verdict(
            "envkit", "could-not-run", f"{type(exc).__name__}: {exc}"[:200], 0.0
        )
    row.verdicts.update(run_peers(item, graders))
    return row


def table(rows: list[Row]) -> str:
    """The side-by-side table: one line per case, then the totals per bed and tool."""
    short = {"caught": "CAUGHT", "missed": "missed", "quiet": "quiet", "noise": "NOISE"}
    lines = [f"{'bed':7s} {'case':58s} {'kind':8s} " + " ".join(f"{t:>22s}" for t in TOOLS)]
    for r in rows:
        cells = []
        for t in TOOLS:
            v = r.verdicts.get(t)
            cells.append(
                f"{'n/a':>22s}"
                if v is None
                else f"{short.get(v.verdict, 'could not run'):>15s} {v.seconds:5.1f}s"
            )
        lines.append(f"{r.bed:7s} {r.key[:58]:58s} {r.kind:8s} " + " ".join(cells))
    lines.append("")
    lines.append(
        f"{'bed':7s} {'tool':14s} {'defects caught':>15s} {'near-misses quiet':>18s} {'could not run':>14s} {'time':>8s}"
    )
    for bed in dict.fromkeys(r.bed for r in rows):
        group = [r for r in rows if r.bed == bed]
        for t in TOOLS:
            vs = [(r.kind, r.verdicts[t]) for r in group if t in r.verdicts]
            d = [v for k, v in vs if k == "defect"]
            n = [v for k, v in vs if k != "defect"]
            caught = sum(v.verdict == "caught" for v in d)
            quiet = sum(v.verdict == "quiet" for v in n)
            cnr = sum(v.verdict == "could-not-run" for _k, v in vs)
            secs = sum(v.seconds for _k, v in vs)
            lines.append(
                f"{bed:7s} {t:14s} {caught:>7d} of {len(d):<5d} {quiet:>9d} of {len(n):<6d} {cnr:>14d} {secs:>7.0f}s"
            )
    return "\n".join(lines)


def gaps(rows: list[Row]) -> list[str]:
    """Defects a peer catches and envkit misses: the gaps to close."""
    out = []
    for r in rows:
        if (
            r.kind != "defect"
            or r.verdicts.get("envkit", Verdict("", "", "", 0)).verdict == "caught"
        ):
            continue
        by = [t for t in TOOLS[1:] if r.verdicts.get(t) and r.verdicts[t].verdict == "caught"]
        if by:
            out.append(f"{r.bed}/{r.key}: caught by {', '.join(by)}, missed by envkit")
    return out


def write_rows(path: Path, versions: dict[str, str], rows: list[Row]) -> None:
    """Write ``rows`` to ``path`` (JSON), keeping the rows of cases this run did not play
    (so one bed can be re-run alone)."""
    played = {(r.bed, r.key) for r in rows}
    kept = []
    if path.is_file():
        kept = [
            r
            for r in json.loads(path.read_text(encoding="utf-8")).get("rows", [])
            if (r["bed"], r["key"]) not in played
        ]
    new = []
    for r in rows:
        verdicts = {t: {**asdict(v), "seconds": round(v.seconds, 1)} for t, v in r.verdicts.items()}
        new.append(
            {**{k: v for k, v in asdict(r).items() if k != "verdicts"}, "verdicts": verdicts}
        )
    order = {"reverse": 0, "zoo": 1, "field": 2, "corpus": 3}
    every = sorted(kept + new, key=lambda r: (order.get(r["bed"], 9), r["key"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"peers": versions, "rows": every}
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--bed", default="reverse,zoo,field,corpus", help="comma-separated beds")
    parser.add_argument("--rule", action="append", default=[], help="only this per-rule corpus")
    parser.add_argument("--jobs", type=int, default=2, help="cases played at once")
    parser.add_argument(
        "--json", type=Path, default=None, help=f"write the rows (e.g. {RESULTS.relative_to(REPO)})"
    )
    args = parser.parse_args()
    beds = [b.strip() for b in args.bed.split(",") if b.strip()]
    versions = {p: peer_version(p) for p in PEERS}
    print(
        "peers: " + ", ".join(f"{p} {v} ({PEERS_HOME / PEERS[p][0]})" for p, v in versions.items()),
        file=sys.stderr,
    )
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="envkit-peers-") as tmp, servers_without_gradio():
        work = Path(tmp)
        items: list[Item] = []
        if "reverse" in beds:
            items += reverse_bed(work)
        if "zoo" in beds:
            items += zoo_bed(work)
        if "field" in beds:
            items += field_bed()
        if "corpus" in beds:
            items += corpus_bed(args.rule)
        graders = Graders()
        rows: list[Row] = []
        try:
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                for row in pool.map(lambda i: play_item(i, work, graders), items):
                    rows.append(row)
                    cells = ", ".join(f"{t} {v.verdict}" for t, v in row.verdicts.items())
                    print(f"  {row.bed}/{row.key}: {cells}", file=sys.stderr, flush=True)
        finally:
            graders.close()
    print(table(rows))
    found = gaps(rows)
    print("\ngaps (a peer catches, envkit misses): " + ("none" if not found else ""))
    for line in found:
        print("  " + line)
    print(f"\n({len(rows)} cases, {time.perf_counter() - t_all:.0f} s)")
    if args.json:
        write_rows(args.json, versions, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
