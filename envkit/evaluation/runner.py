"""``evaluate()``: play episodes against an environment with a policy and summarise them.

Sessions go over the WebSocket (:class:`envkit.wire.EnvSession`), one per worker thread;
``concurrency`` workers run in parallel, capped by the server's capacity (a session refused
with CAPACITY_REACHED is closed and the run goes on with fewer; :func:`envkit.wire.open_sessions`, docs/protocol.md).
Every answer of the server is awaited at most ``reply_timeout_s``; three lost sessions in a row,
a server that exits, or the ``timeout_s`` budget stop the run.
Groups: ``episodes`` seeds (``seed``, ``seed+1``, ...) are each played ``group_size`` times,
so a run has ``episodes * group_size`` episodes (GRPO-style groups; pass@k per group).
"""

from __future__ import annotations

import datetime as _dt
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.errors import EnvkitError, ExitCode, UsageError, UserError, WireError
from envkit.evaluation import stats as _stats
from envkit.evaluation.output import atomic_write, summary_bytes, trajectories_bytes, write_plot
from envkit.evaluation.policies import OpenAIPolicy, ProcessPolicy, RandomPolicy
from envkit.evaluation.records import EpisodeRecord, EvalSettings, StepRecord
from envkit.wire import EnvSession, Refusal

DEFAULT_MAX_STEPS = 32
DEFAULT_BASE_URL = "https://router.huggingface.co/v1"
DEFAULT_MAX_RETRIES = 4
MAX_SESSION_LOSSES = 3  # lost sessions in a row (over all workers) that stop the run
STOP_GRACE_S = 1.0  # SIGTERM grace before SIGKILL (uvicorn waits for a hung step otherwise)
POLICIES = ("openai", "random", "oracle")
_SUCCESS_EPS = 1e-9


@dataclass
class EvalResult:
    """The outcome of :func:`evaluate`.

    Attributes:
        summary: what ``summary.json`` holds (statistics, settings, timings, notes).
        episodes: one record per finished episode (``to_json()`` gives the lines of
            ``trajectories.jsonl``).
        out_dir: where files were written, or ``None``.
        files: ``{"trajectories": path, "summary": path, "plot": path}`` for files written.
        notes: things the user should know (capacity cap, plot skipped, missing API key).
        interrupted: Ctrl-C stopped the run; files hold the episodes finished before it.
    """

    summary: dict[str, Any]
    episodes: list[EpisodeRecord]
    out_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False

    @property
    def exit_code(self) -> ExitCode:
        """``FINDINGS`` (1) when an episode ended with an environment error, else ``OK``."""
        return ExitCode.FINDINGS if self.summary.get("episode_errors") else ExitCode.OK


class EvalInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during :func:`evaluate`; ``result`` holds the finished episodes
    and the partial summary, already written to disk when an output directory was given."""

    def __init__(self, result: EvalResult):
        super().__init__("evaluation interrupted")
        self.result = result


class EvalAbortedError(UserError):
    """The run stopped before its end: the ``--timeout`` budget ran out, sessions kept getting
    lost, or the server exited. The message says which; finished episodes are written."""


class _Stopped(Exception):
    pass


def _resolve_key(api_key_env: str | None) -> tuple[str | None, str | None]:
    if api_key_env:
        value = os.environ.get(api_key_env, "")
        if not value:
            raise UsageError(
                f"--api-key-env {api_key_env}: the environment variable "
                f"${api_key_env} is not set or empty.",
                hint=f"Export it (`export {api_key_env}=...`) or name another "
                "variable with --api-key-env.",
            )
        return value, api_key_env
    for name in ("HF_TOKEN", "OPENAI_API_KEY"):
        if os.environ.get(name):
            return os.environ[name], name
    return None, None


def _fetch_json(url: str, timeout_s: float) -> dict[str, Any]:
    import httpx

    try:
        r = httpx.get(url, timeout=timeout_s, trust_env=False)
        r.raise_for_status()
        data = r.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise WireError(
            f"GET {url} failed: {exc}.",
            hint="Check the URL points at an OpenEnv server (`envkit validate "
            "--url URL` tells what is wrong).",
        ) from None
    if not isinstance(data, dict):
        raise WireError(
            f"GET {url} did not answer a JSON object.",
            hint="Check the URL points at an OpenEnv server.",
        )
    return data


def _capacity_error(refusal: Refusal, url: str) -> WireError:
    data = refusal.data
    return WireError(
        f"The server at {url} refused every session: CAPACITY_REACHED "
        f"({data.get('active_sessions', '?')}/{data.get('max_sessions', '?')} sessions active).",
        hint="Close other clients (leaked sessions hold slots until the server restarts, "
        "huggingface/OpenEnv#1000) or raise max_concurrent_envs in server/app.py.",
    )


def _open_sessions(
    url: str, want: int, reply_s: float, notes: list[str], on_note: Callable[[str], None]
) -> tuple[list[EnvSession], int | None]:
    """Sessions for the workers (:func:`envkit.wire.open_sessions`); CAPACITY_REACHED caps
    the concurrency with a note, any other refusal is an error."""
    from envkit.wire import CAPACITY_REACHED, open_sessions

    pool = open_sessions(url, want, timeout_s=reply_s)
    refusal = pool.refusal
    if refusal is None:
        return pool.sessions, None
    if refusal.code == CAPACITY_REACHED and pool.sessions:
        note = (
            f"--concurrency {want} capped to {len(pool.sessions)}: the server answered "
            f"CAPACITY_REACHED for session {len(pool.sessions) + 1} (max_sessions="
            f"{refusal.data.get('max_sessions', '?')}, "
            f"active={refusal.data.get('active_sessions', '?')}). Raise "
            "max_concurrent_envs to run more in parallel."
        )
        notes.append(note)
        on_note(note)
        return pool.sessions, refusal.capacity
    pool.close()
    if refusal.code == CAPACITY_REACHED:
        raise _capacity_error(refusal, url)
    raise WireError(
        f"The server at {url} refused a session: {refusal.code}: {refusal.message}.",
        hint="Check the server log; `envkit validate` diagnoses sessions.",
    )


def _error_text(exc: Any) -> str:
    data = getattr(exc, "data", {}) or {}
    msg = str(data.get("message", "")).strip()
    errors = data.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        first = errors[0]
        loc = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        msg = f"{msg}: {loc + ': ' if loc else ''}{first.get('msg', '')}"
    return f"{exc.code}: {msg}"[:500]


class _Lost(Exception):
    """The session failed (no answer in time, or closed) during ``what``."""

    def __init__(self, what: str, exc: WireError):
        super().__init__(f"{what}: {exc.message}")
        self.text = f"{what}: {exc.message}"


@dataclass
class _Ctx:
    max_steps: int
    hi: float
    stop: threading.Event
    url: str
    reply_s: float
    losses: int = 0  # sessions lost in a row, over all workers (reset by a finished episode)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _play(
    session: EnvSession, policy: Any, task: tuple[int, int, int, int], ctx: _Ctx
) -> EpisodeRecord:
    """One episode. Raises _Lost (transport), ModelEndpointError (fatal), _Stopped."""
    from envkit.policy import PolicyError
    from envkit.wire import EnvErrorFrame, is_finite_number

    episode, group, member, seed = task
    t0 = time.perf_counter()
    rec = EpisodeRecord(episode=episode, group=group, member=member, seed=seed)

    def finish() -> EpisodeRecord:
        rewards = [float(s.reward) for s in rec.steps if is_finite_number(s.reward)]
        rec.return_ = float(sum(rewards))
        rec.max_reward = max(rewards) if rewards else None
        rec.success = any(r >= ctx.hi - _SUCCESS_EPS for r in rewards)
        rec.truncated = (not rec.done) and rec.error is None
        rec.duration_s = time.perf_counter() - t0
        return rec

    policy.begin(episode, seed)
    try:
        first = session.reset(seed=seed)
    except EnvErrorFrame as exc:
        rec.error = f"reset failed: {_error_text(exc)}"
        return finish()
    except WireError as exc:
        raise _Lost(f"`reset(seed={seed})`", exc) from None
    rec.reset = {
        "observation": first.observation,
        "reward": first.reward,
        "done": first.done,
        "latency_s": first.latency_s,
    }
    obs, reward, rec.done = first.observation, None, first.done
    last_error: str | None = None
    while not rec.done and len(rec.steps) < ctx.max_steps:
        if ctx.stop.is_set():
            raise _Stopped
        n = len(rec.steps)
        p0 = time.perf_counter()
        try:
            decision = policy.act(obs, reward=reward, step=n, last_error=last_error)
        except PolicyError as exc:
            rec.steps.append(
                StepRecord(
                    step=n + 1,
                    action=None,
                    policy_latency_s=time.perf_counter() - p0,
                    error=exc.message,
                    error_code="POLICY_ERROR",
                )
            )
            rec.error = f"policy failed: {exc.message}"
            break
        step = StepRecord(
            step=n + 1,
            action=decision.action,
            policy_latency_s=time.perf_counter() - p0,
            reply=decision.reply,
            usage=decision.usage or None,
        )
        rec.steps.append(step)
        if ctx.stop.is_set():
            raise _Stopped
        if decision.action is None:
            step.error, step.parse_error = decision.error, True
            last_error = decision.error
            continue
        try:
            res = session.step(decision.action)
        except EnvErrorFrame as exc:
            step.error, step.error_code = _error_text(exc), exc.code
            if exc.code == "VALIDATION_ERROR":
                last_error = f"the environment rejected it: {_error_text(exc)}"
                continue
            rec.error = f"step failed: {_error_text(exc)}"
            break
        except WireError as exc:
            raise _Lost(f"`step` {n + 1} of seed {seed}", exc) from None
        step.observation, step.reward, step.done = res.observation, res.reward, res.done
        step.latency_s = res.latency_s
        obs, reward, rec.done, last_error = res.observation, res.reward, res.done, None
    return finish()


def _worker(
    session: EnvSession,
    policy: Any,
    tasks: queue.Queue,
    results: queue.Queue,
    ctx: _Ctx,
    holder: dict[str, Any],
) -> None:
    from envkit.wire import EnvSession

    try:
        while not ctx.stop.is_set():
            try:
                task = tasks.get_nowait()
            except queue.Empty:
                break
            try:
                record = _play(session, policy, task, ctx)
            except _Stopped:
                return
            except _Lost as lost:
                if ctx.stop.is_set():
                    return
                # Transport failure: record the episode, then try one fresh session, unless
                # sessions keep getting lost (a hung or crashing server).
                episode, group, member, seed = task
                results.put(
                    (
                        "episode",
                        EpisodeRecord(
                            episode=episode,
                            group=group,
                            member=member,
                            seed=seed,
                            error=f"session lost: {lost.text}",
                        ),
                    )
                )
                with ctx.lock:
                    ctx.losses += 1
                    losses = ctx.losses
                if losses >= MAX_SESSION_LOSSES:
                    results.put(
                        (
                            "fatal",
                            EvalAbortedError(
                                f"Stopped after {losses} lost sessions in a row; the last: "
                                f"{lost.text.rstrip('.')}.",
                                hint="Most likely `reset` or `step` hangs or crashes: `envkit "
                                "validate` tells which. Raise --reply-timeout if answers are just "
                                "slow.",
                            ),
                        )
                    )
                    return
                session.close()
                session = EnvSession(ctx.url, timeout_s=ctx.reply_s)
                holder["session"] = session
                continue
            if ctx.stop.is_set():
                return
            with ctx.lock:
                ctx.losses = 0
            results.put(("episode", record))
    except BaseException as exc:  # noqa: BLE001 - handed to the main thread
        if not ctx.stop.is_set():
            results.put(("fatal", exc))
    finally:
        results.put(("done", None))


def evaluate(
    path: str | os.PathLike[str] | None = None,
    *,
    url: str | None = None,
    policy: str = "openai",
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    episodes: int = 8,
    group_size: int = 1,
    concurrency: int = 1,
    max_steps: int | None = None,
    temperature: float | None = None,
    seed: int = 0,
    out_dir: str | os.PathLike[str] | None = None,
    system_prompt: str | None = None,
    max_tokens: int | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    python: str | None = None,
    timeout_s: float | None = None,
    startup_timeout_s: float | None = None,
    reply_timeout_s: float | None = None,
    on_episode: Callable[[EpisodeRecord, int, int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> EvalResult:
    """Play ``episodes * group_size`` episodes and summarise them.

    Args:
        path: environment directory. Without ``url`` its server is started on a free port of
            127.0.0.1 and stopped afterwards; with ``url`` only its manifest is read (reward
            range, oracle, max_steps). Defaults to ``.`` when ``url`` is not given.
        url: a running server (``http://host:port`` or a Space app URL).
        policy: ``"openai"``, ``"random"``, ``"oracle"`` (the manifest's
            ``envkit.oracle``) or ``"module:callable"`` (run in the environment's
            interpreter with the environment directory on ``sys.path``).
        model: model id for ``openai`` (default ``$MODEL_NAME``).
        base_url: OpenAI-compatible endpoint (default ``$API_BASE_URL``, else the Hugging
            Face router ``https://router.huggingface.co/v1``).
        api_key_env: name of the environment variable holding the API key (default
            ``HF_TOKEN``, then ``OPENAI_API_KEY``). The key is never printed or written.
        episodes: number of seeds (groups), >= 1; seeds are ``seed .. seed+episodes-1``.
        group_size: rollouts per seed, >= 1 (pass@k is reported for k up to this).
        concurrency: parallel WebSocket sessions, >= 1, capped by the server's capacity.
        max_steps: steps per episode before it is cut off (``truncated``); default the
            manifest's ``envkit.max_steps``, else 32.
        temperature: sampling temperature for ``openai``; default 0.0 when ``group_size`` is
            1, else 1.0 (identical rollouts make groups pointless).
        seed: first reset seed, >= 0; also seeds the ``random`` policy.
        out_dir: directory for ``trajectories.jsonl``, ``summary.json``, ``rewards.png``
            (written atomically); ``None`` writes nothing.
        system_prompt: replaces the system prompt derived from ``/schema``.
        max_tokens: completion token cap sent to the endpoint (``None``: not sent).
        max_retries: retries of a failed model call (429, 5xx, connection) with the openai
            client's exponential backoff (honours ``Retry-After``); bounded, >= 0.
        python: interpreter that serves the environment and runs its policies
            (``--python``; resolved once with :func:`envkit.project.resolve_python`).
        timeout_s: seconds for the whole run (``--timeout``): start-up, every episode and
            the stop; ``None``: no budget. When it runs out the run stops, the finished
            episodes are written and :class:`EvalAbortedError` is raised.
        startup_timeout_s: seconds to wait for ``GET /health`` (``--startup-timeout``;
            default the manifest's ``startup_timeout_s``, 60).
        reply_timeout_s: seconds to wait for one answer of the server (``--reply-timeout``;
            default ``max(2, 2 x step_timeout_s)`` of the manifest). A session without an
            answer in time is lost; after 3 lost sessions in a row the run stops.
        on_episode: called in the calling thread as ``on_episode(record, finished, total)``.
        on_note: called with each note as it arises (capacity cap, missing key).

    Returns:
        :class:`EvalResult`.

    Raises:
        UsageError: invalid arguments (unknown policy, no model, no oracle, bad counts).
        SpecError: the manifest cannot be read.
        ServerStartError: the environment server did not start.
        WireError: the server cannot be reached or refuses every session (CAPACITY_REACHED).
        ModelEndpointError: the model endpoint is unreachable, rejects the key (401), keeps
            rate-limiting (429) after ``max_retries``, or the context is too long. Finished
            episodes are written to ``out_dir`` first.
        EvalAbortedError: the ``timeout_s`` budget ran out, 3 sessions in a row were lost
            (the server hangs or crashes in ``reset``/``step``), or the server envkit started
            exited; finished episodes and a partial summary are written first (exit 2).
        EvalInterrupted: Ctrl-C; finished episodes and a partial summary are written first.
    """
    t_start = time.perf_counter()
    started_at = _dt.datetime.now(_dt.UTC)
    for name, value, lo in (
        ("--episodes", episodes, 1),
        ("--group-size", group_size, 1),
        ("--concurrency", concurrency, 1),
        ("--seed", seed, 0),
        ("--max-retries", max_retries, 0),
    ):
        if not isinstance(value, int) or value < lo:
            raise UsageError(
                f"{name} must be an integer >= {lo}, got {value!r}.",
                hint=f"Pass {name} {lo} or more.",
            )
    if max_steps is not None and max_steps < 1:
        raise UsageError(f"--max-steps must be >= 1, got {max_steps}.", hint="Pass 1 or more.")
    notes: list[str] = []
    note = on_note or (lambda _msg: None)

    from envkit.manifest import APP_PATTERN
    from envkit.project import EnvProject, env_spec, resolve_python, resolve_timeouts
    from envkit.wire import normalise_url

    project = None
    if url is None or path is not None:
        project = EnvProject.load(path if path is not None else ".")
    manifest = project.manifest if project else None
    spec = env_spec(manifest)
    lo_hi = (float(spec.reward_range[0]), float(spec.reward_range[1])) if manifest else (0.0, 1.0)
    steps_cap = max_steps or (spec.max_steps if manifest and spec.max_steps else DEFAULT_MAX_STEPS)
    timeouts = resolve_timeouts(
        spec,
        timeout_s=timeout_s,
        startup_timeout_s=startup_timeout_s,
        reply_timeout_s=reply_timeout_s,
    )
    if temperature is None:
        temperature = 0.0 if group_size == 1 else 1.0

    # -- the policy, checked before anything starts --------------------------------------------
    key = key_env = None
    if policy == "openai":
        model = model or os.environ.get("MODEL_NAME") or None
        if not model:
            raise UsageError(
                "--policy openai needs a model.",
                hint="Pass --model (e.g. --model Qwen/Qwen3-4B) or set $MODEL_NAME.",
            )
        base_url = (base_url or os.environ.get("API_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key, key_env = _resolve_key(api_key_env)
        if key is None:
            msg = (
                "No API key: $HF_TOKEN and $OPENAI_API_KEY are unset, so requests are sent "
                "without one (fine for a local server)."
            )
            notes.append(msg)
            note(msg)
    elif policy == "random":
        pass
    elif policy == "oracle" or ":" in policy:
        if policy == "oracle":
            if project is None:
                raise UsageError(
                    "--policy oracle needs the environment directory (its "
                    "openenv.yaml names the oracle).",
                    hint="Pass PATH together with --url.",
                )
            if not spec.oracle:
                raise UsageError(
                    f"{project.root / 'openenv.yaml'} has no oracle.",
                    hint="Add `oracle: server.oracle:policy` to openenv.yaml or "
                    "pass --policy module:callable.",
                )
        elif not APP_PATTERN.fullmatch(policy):
            raise UsageError(
                f"--policy {policy}: expected module.path:callable.",
                hint="E.g. --policy agents.greedy:policy.",
            )
    else:
        raise UsageError(
            f"--policy {policy}: unknown policy.",
            hint="Use openai, random, oracle or module:callable.",
        )
    if policy != "openai":
        model = None
    runs_env_code = url is None or policy == "oracle" or ":" in policy
    proc_root = project.root if project else Path.cwd().resolve()
    # The interpreter is resolved here, once, and handed to the server and the policy.
    interpreter = resolve_python(proc_root, python) if runs_env_code else None
    settings = EvalSettings(
        policy=policy,
        model=model,
        base_url=base_url if policy == "openai" else None,
        api_key_env=key_env if policy == "openai" else None,
        episodes=episodes,
        group_size=group_size,
        concurrency=concurrency,
        max_steps=steps_cap,
        temperature=temperature,
        seed=seed,
        out_dir=Path(out_dir) if out_dir is not None else None,
        system_prompt=system_prompt,
        max_tokens=max_tokens,
        max_retries=max_retries,
        timeouts=timeouts,
        python=interpreter,
    )
    proc_spec = (
        (spec.oracle if policy == "oracle" else policy)
        if (policy == "oracle" or ":" in policy)
        else None
    )

    server = None
    server_start_s = None
    try:
        if url is None:
            from envkit.server import start_server

            assert project is not None and manifest is not None
            server = start_server(project.root, manifest.app, python=interpreter)
            server_start_s = server.wait_healthy(timeout_s=timeouts.startup_s)
            env_url = server.url
        else:
            env_url = normalise_url(url)
        return _run(
            settings,
            env_url=env_url,
            project=project,
            manifest=manifest,
            lo_hi=lo_hi,
            key=key,
            proc=(proc_spec, proc_root),
            notes=notes,
            note=note,
            on_episode=on_episode,
            started_at=started_at,
            t_start=t_start,
            server_start_s=server_start_s,
            server=server,
        )
    finally:
        if server is not None:
            server.stop()


def _stop_server(server: Any, notes: list[str], note: Callable[[str], None]) -> None:
    """Stop the server envkit started; note the processes that had escaped its group."""
    if server is None:
        return
    server.stop(grace_s=STOP_GRACE_S)
    if server.strays:
        msg = (
            f"Stopped {len(server.strays)} process(es) that had left the server's process "
            f"group: {'; '.join(server.strays[:5])}."
        )
        notes.append(msg)
        note(msg)


def _run(
    settings: EvalSettings,
    *,
    env_url: str,
    project: Any,
    manifest: Any,
    lo_hi: tuple[float, float],
    key: str | None,
    proc: tuple[Any, Any],
    notes: list[str],
    note: Callable[[str], None],
    on_episode: Callable[..., None] | None,
    started_at: _dt.datetime,
    t_start: float,
    server_start_s: float | None,
    server: Any,
) -> EvalResult:
    from envkit.evaluation.prompts import system_prompt as derive_prompt

    timeouts = settings.timeouts
    deadline = timeouts.deadline(t_start)
    schemas = _fetch_json(f"{env_url}/schema", timeouts.reply_s)
    action_schema = schemas.get("action")
    if not isinstance(action_schema, dict):
        raise WireError(
            f"GET {env_url}/schema has no `action` JSON Schema.",
            hint="Check the server runs OpenEnv's create_app.",
        )
    client = None
    prompt: str | None = None
    policy = settings.policy
    if policy == "openai":
        try:
            metadata = _fetch_json(f"{env_url}/metadata", timeouts.reply_s)
        except WireError:
            metadata = {}
        prompt = (
            settings.system_prompt
            if settings.system_prompt is not None
            else derive_prompt(schemas, metadata)
        )
        import openai

        client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=key or "no-key-set",
            max_retries=settings.max_retries,
            timeout=120.0,
        )

        def make_policy() -> Any:
            return OpenAIPolicy(
                client,
                model=settings.model or "",
                system_prompt=prompt,
                action_schema=action_schema,
                temperature=settings.temperature,
                max_tokens=settings.max_tokens,
                base_url=settings.base_url or "",
                key_env=settings.api_key_env,
                max_retries=settings.max_retries,
            )
    elif policy == "random":

        def make_policy() -> Any:
            return RandomPolicy(action_schema, settings.seed)
    else:
        spec_, root_ = proc
        assert settings.python is not None

        def make_policy() -> Any:
            return ProcessPolicy(spec_, root_, settings.python or "")

    total = settings.total
    tasks: queue.Queue = queue.Queue()
    for task in settings.tasks():
        tasks.put(task)
    results: queue.Queue = queue.Queue()
    ctx = _Ctx(
        max_steps=settings.max_steps,
        hi=float(lo_hi[1]),
        stop=threading.Event(),
        url=env_url,
        reply_s=timeouts.reply_s,
    )
    finished: list[EpisodeRecord] = []
    sessions: list[EnvSession] = []
    policies: list[Any] = []
    holders: list[dict[str, Any]] = []
    capacity = None
    fatal: BaseException | None = None
    interrupted = False
    try:
        try:
            sessions, capacity = _open_sessions(
                env_url, min(settings.concurrency, total), timeouts.reply_s, notes, note
            )
            for _ in sessions:
                policies.append(make_policy())
            threads = []
            for s, p in zip(sessions, policies):
                holder = {"session": s}
                holders.append(holder)
                t = threading.Thread(
                    target=_worker,
                    args=(s, p, tasks, results, ctx, holder),
                    daemon=True,
                    name="envkit-eval-worker",
                )
                t.start()
                threads.append(t)
            running = len(threads)
            while running:
                if deadline is not None and time.perf_counter() > deadline:
                    fatal = EvalAbortedError(
                        f"The run exceeded --timeout {timeouts.budget_s:g} s with "
                        f"{len(finished)} of {total} episodes finished.",
                        hint="Raise --timeout, or play fewer --episodes.",
                    )
                    break
                if server is not None and not server.alive():
                    tail = server.log_tail(20)
                    fatal = EvalAbortedError(
                        f"The environment server exited with code {server.popen.returncode} "
                        f"during the run ({len(finished)} of {total} episodes finished).",
                        hint="Fix the error in its log (`envkit validate` shows it too).",
                        details=tail or None,
                    )
                    break
                try:
                    kind, payload = results.get(timeout=0.2)
                except queue.Empty:
                    continue
                if kind == "episode":
                    finished.append(payload)
                    if on_episode:
                        on_episode(payload, len(finished), total)
                elif kind == "fatal":
                    fatal = payload
                    break
                else:
                    running -= 1
        except KeyboardInterrupt:
            interrupted = True
        except EnvkitError as exc:  # e.g. a policy that cannot load
            fatal = exc
    finally:
        ctx.stop.set()
        for h in holders:
            h["session"].close()
        for s in sessions:
            s.close()
        for p in policies:
            try:
                p.close()
            except Exception:  # noqa: BLE001
                pass
        if client is not None:
            client.close()
        _stop_server(server, notes, note)
    while True:  # episodes that finished while we were stopping
        try:
            kind, payload = results.get_nowait()
        except queue.Empty:
            break
        if kind == "episode" and not any(e.episode == payload.episode for e in finished):
            finished.append(payload)

    finished.sort(key=lambda e: e.episode)
    records = [e.to_json() for e in finished]
    wall = time.perf_counter() - t_start
    stats = _stats.summarize(records, group_size=settings.group_size)
    summary: dict[str, Any] = {
        "environment": {
            "name": manifest.name if manifest else None,
            "path": str(project.root) if project else None,
            "url": env_url,
            "server_started_by_envkit": server is not None,
            "reward_range": list(lo_hi),
            "capacity": capacity,
        },
        "policy": policy,
        "model": settings.model,
        "base_url": settings.base_url,
        "api_key_env": settings.api_key_env,
        "settings": settings.to_json(concurrency_used=len(sessions), system_prompt_text=prompt),
        "complete": not interrupted and fatal is None and len(finished) == total,
        "interrupted": interrupted,
        "aborted": (getattr(fatal, "message", None) or str(fatal)) if fatal else None,
        **stats,
        "timings": {
            "started_at": started_at.isoformat(timespec="seconds"),
            "finished_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "wall_s": wall,
            "server_start_s": server_start_s,
            "mean_episode_s": (sum(e.duration_s for e in finished) / len(finished))
            if finished
            else None,
            "episodes_per_s": len(finished) / wall if wall > 0 else None,
        },
        "notes": notes,
        "definitions": _stats.DEFINITIONS,
    }
    from envkit._version import __version__

    summary["envkit_version"] = __version__
    result = EvalResult(summary=summary, episodes=finished, notes=notes, interrupted=interrupted)
    out_dir = settings.out_dir
    if out_dir is not None:
        result.out_dir = out_dir
        traj = out_dir / "trajectories.jsonl"
        atomic_write(traj, trajectories_bytes(records))
        result.files["trajectories"] = traj
        plot = out_dir / "rewards.png"
        title = " · ".join(
            x for x in (manifest.name if manifest else env_url, policy, settings.model) if x
        )
        plot_note = write_plot(plot, records, reward_range=lo_hi, title=title)
        if plot_note:
            notes.append(plot_note)
        else:
            result.files["plot"] = plot
        summ = out_dir / "summary.json"
        atomic_write(summ, summary_bytes(summary))
        result.files["summary"] = summ
    if fatal is not None:
        if isinstance(fatal, EnvkitError):
            if out_dir is not None:
                extra = (
                    f"{len(finished)} finished episode(s) and a partial summary were "
                    f"written to {out_dir}."
                )
                fatal.details = f"{fatal.details}\n{extra}" if fatal.details else extra
            raise fatal
        raise fatal
    if interrupted:
        raise EvalInterrupted(result)
    return result
