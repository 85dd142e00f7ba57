"""``evaluate()``: play episodes against an environment with a policy and summarise them.

A run is three pieces: the policy factory (:mod:`envkit.evaluation.factory`: checks
``--policy`` before anything starts, then builds one policy per worker), the worker pool
(:mod:`envkit.evaluation.pool`: sessions, workers, the shared ``--timeout`` budget and the stop
conditions) and the typed summary (:mod:`envkit.evaluation.summary`: ``summary.json`` and the
files). This module resolves the options against the environment, starts its server when
needed and wires the pieces together.

Groups: ``episodes`` seeds (``seed``, ``seed+1``, ...) are each played ``group_size`` times,
so a run has ``episodes * group_size`` episodes (GRPO-style groups; pass@k per group).
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.envdir import EnvDir, EnvProject
from envkit.envdir.digest import digests_of
from envkit.envdir.project import env_spec, resolve_python, resolve_timeouts
from envkit.errors import EnvkitError, EvalAbortedError, InternalError, WireError
from envkit.evaluation.factory import (
    PolicyFactory,
    PolicyPlan,
    plan_policy,
    probe_endpoint,
    require_model,
)
from envkit.evaluation.options import (
    DEFAULT_BASE_URL,
    DEFAULT_MAX_RETRIES,
    DEFAULT_SESSION_RETRIES,
    EVAL_DEFAULT_MAX_STEPS,
    EvalOptions,
    Notes,
)
from envkit.evaluation.output import append_record, run_metadata, write_run_start
from envkit.evaluation.pool import WorkerPool
from envkit.evaluation.records import EpisodeRecord, EvalSettings
from envkit.evaluation.rundir import resume_options, stored_options
from envkit.evaluation.summary import (
    EnvFacts,
    EvalInterrupted,
    EvalResult,
    EvalSummary,
    write_files,
)
from envkit.server import ServerProcess, start_server
from envkit.wire import normalise_url, tls

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_RETRIES",
    "EVAL_DEFAULT_MAX_STEPS",
    "EvalAbortedError",
    "EvalInterrupted",
    "EvalResult",
    "evaluate",
    "resume",
    "run_evaluation",
]

if TYPE_CHECKING:
    from envkit.envdir import EnvProject
    from envkit.envdir.manifest import EnvSpec, Manifest
    from envkit.envdir.project import Timeouts

STOP_GRACE_S = 1.0  # SIGTERM grace before SIGKILL (uvicorn waits for a hung step otherwise)


def evaluate(
    path: str | os.PathLike[str] | None = None,
    *,
    url: str | Sequence[str] | None = None,
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
    session_retries: int = DEFAULT_SESSION_RETRIES,
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
        url: a running server (``http://host:port`` or a Space app URL), or several
            (replicas, several Spaces of one environment): sessions are spread over them
            round-robin.
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
            manifest's ``envkit.max_steps``, else :data:`EVAL_DEFAULT_MAX_STEPS` (32).
        temperature: sampling temperature for ``openai``; default 0.0 when ``group_size`` is
            1, else 1.0 (identical rollouts make groups pointless).
        seed: first reset seed, >= 0; also seeds the ``random`` policy.
        out_dir: the run directory: ``run.json`` (the run's settings, for ``--resume``),
            ``trajectories.jsonl`` (appended per finished episode), ``summary.json``,
            ``rewards.png``; ``None`` writes nothing.
        system_prompt: replaces the system prompt derived from ``/schema``.
        max_tokens: completion token cap sent to the endpoint (``None``: not sent).
        max_retries: retries of a failed model call (429, 5xx, connection) with the openai
            client's exponential backoff (honours ``Retry-After``); bounded, >= 0.
        session_retries: plays more of an episode whose session was lost mid-episode
            (connection dropped or closed: a replica gone), each on a fresh session (another
            URL when its own is unreachable), from reset with the same seed; >= 0. An episode
            still lost after them (or one whose answer did not come within
            ``reply_timeout_s``: not retried) is recorded as *lost*: ``"lost": true`` in
            ``trajectories.jsonl``, counted in ``lost_episodes``, left out of every other
            statistic, and played again by :func:`resume`.
        python: interpreter that serves the environment and runs its policies
            (``--python``; resolved once with :func:`envkit.envdir.project.resolve_python`).
        timeout_s: seconds for the whole run (``--timeout``): start-up, every episode and
            the stop; ``None``: no budget. When it runs out the run stops, the finished
            episodes are written and :class:`EvalAbortedError` is raised.
        startup_timeout_s: seconds to wait for ``GET /health`` (``--startup-timeout``;
            default the manifest's ``startup_timeout_s``, 60).
        reply_timeout_s: seconds to wait for one answer of the server (``--reply-timeout``;
            default ``max(2, 2 x step_timeout_s)`` of the manifest). A session without an
            answer in time is lost; after 3 lost episodes in a row the run stops.
        on_episode: called in the calling thread as ``on_episode(record, finished, total)``.
        on_note: called with each note as it arises (capacity cap, missing key).

    Returns:
        :class:`EvalResult`.

    Raises:
        UsageError: invalid arguments (unknown policy, no model, no oracle, bad counts).
        SpecError: the manifest cannot be read.
        ServerStartError: the environment server did not start.
        WireError: the server cannot be reached or refuses every session (CAPACITY_REACHED).
        ModelEndpointError: the model endpoint is unreachable (checked before the server
            starts, so nothing is written), rejects the key (401), keeps rate-limiting (429)
            after ``max_retries``, or the context is too long. Finished episodes are written
            to ``out_dir`` first.
        EvalAbortedError: the ``timeout_s`` budget ran out, 3 episodes in a row were lost
            (the server hangs or crashes in ``reset``/``step``), or the server envkit started
            exited; finished episodes and a partial summary are written first (exit 2).
        EvalInterrupted: Ctrl-C; finished episodes and a partial summary are written first.
    """
    return run_evaluation(
        EvalOptions(
            path=path,
            url=url,
            policy=policy,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            episodes=episodes,
            group_size=group_size,
            concurrency=concurrency,
            max_steps=max_steps,
            temperature=temperature,
            seed=seed,
            out_dir=out_dir,
            system_prompt=system_prompt,
            max_tokens=max_tokens,
            max_retries=max_retries,
            session_retries=session_retries,
            python=python,
            timeout_s=timeout_s,
            startup_timeout_s=startup_timeout_s,
            reply_timeout_s=reply_timeout_s,
            on_episode=on_episode,
            on_note=on_note,
        )
    )


@dataclass(frozen=True)
class _Target:
    """The environment to evaluate, as far as it is known before its server runs.

    Attributes:
        project: the environment directory and manifest, or ``None`` (``--url`` alone).
        spec: the manifest's resolved facts (defaults without a manifest).
        reward_range: ``(lo, hi)`` (``(0.0, 1.0)`` without a manifest).
        root: where the environment's code runs (the project, else the working directory).
    """

    project: EnvProject | None
    spec: EnvSpec
    reward_range: tuple[float, float]
    root: Path

    @property
    def manifest(self) -> Manifest | None:
        return self.project.manifest if self.project else None


@dataclass(frozen=True)
class _Job:
    """A checked run, ready to start: what :func:`_run` needs besides the server."""

    settings: EvalSettings
    plan: PolicyPlan
    target: _Target
    notes: Notes
    on_episode: Callable[[EpisodeRecord, int, int], None] | None
    started_at: _dt.datetime
    t_start: float  # time.perf_counter() at the start; the --timeout budget counts from it
    prior: tuple[EpisodeRecord, ...] = ()  # episodes kept from the interrupted run (--resume)


def resume(
    run_dir: str | os.PathLike[str],
    *,
    concurrency: int | None = None,
    python: str | None = None,
    timeout_s: float | None = None,
    startup_timeout_s: float | None = None,
    reply_timeout_s: float | None = None,
    max_retries: int | None = None,
    session_retries: int | None = None,
    on_episode: Callable[[EpisodeRecord, int, int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> EvalResult:
    """Continue the run in ``run_dir`` (``envkit eval --resume DIR``): its stored settings
    (``run.json``), its finished episodes kept, only the missing and the lost ones played,
    all of them summarised. A line of ``trajectories.jsonl`` cut off by a killed process is dropped and
    its episode played again.

    Args:
        run_dir: the directory an earlier :func:`evaluate` wrote (its ``out_dir``).
        concurrency, python, timeout_s, startup_timeout_s, reply_timeout_s, max_retries,
            session_retries: as for :func:`evaluate`; ``None`` keeps the stored value.
        on_episode, on_note: as for :func:`evaluate` (``finished`` counts kept episodes).

    Returns:
        :class:`EvalResult` over every episode of the run.

    Raises:
        UsageError: ``run_dir`` holds no ``run.json`` of an eval run.
        The rest: as :func:`evaluate`.
    """
    options, kept, dropped = resume_options(
        Path(run_dir),
        concurrency=concurrency,
        python=python,
        timeout_s=timeout_s,
        startup_timeout_s=startup_timeout_s,
        reply_timeout_s=reply_timeout_s,
        max_retries=max_retries,
        session_retries=session_retries,
        on_episode=on_episode,
        on_note=on_note,
    )
    return run_evaluation(options, prior=kept, dropped=dropped)


def run_evaluation(
    options: EvalOptions, prior: Sequence[EpisodeRecord] = (), dropped: int = 0
) -> EvalResult:
    """:func:`evaluate` with its arguments grouped (same returns and raises).

    Everything that can be checked is checked before the server starts.

    Args:
        options: the run's arguments.
        prior: episodes an earlier process of the same run finished (``--resume``): kept,
            written back first, not played again, and summarised with the new ones.
        dropped: lines of the earlier ``trajectories.jsonl`` that were cut off (noted).
    """
    t_start = time.perf_counter()
    started_at = _dt.datetime.now(_dt.UTC)
    options.check_counts()
    notes = Notes(options.on_note)
    if prior or dropped:
        total = options.episodes * options.group_size
        notes.add(
            f"Resumed: {len(prior)} finished episode(s) kept, {total - len(prior)} to play"
            + (f"; {dropped} cut-off line(s) of trajectories.jsonl dropped." if dropped else ".")
        )
    if options.policy == "openai":
        require_model(options)  # a bare `envkit eval` learns of oracle and random first
    target = _load_target(options)
    timeouts = resolve_timeouts(
        target.spec,
        timeout_s=options.timeout_s,
        startup_timeout_s=options.startup_timeout_s,
        reply_timeout_s=options.reply_timeout_s,
    )
    plan = plan_policy(options, target.project, target.spec, notes)
    if plan.name == "openai":
        # Seconds here save the server's start-up (up to a minute) on a wrong --base-url.
        probe_endpoint(plan, max_retries=options.max_retries)
    runs_env_code = not options.urls or plan.callable_spec is not None
    # The interpreter is resolved here, once, and handed to the server and the policy.
    python = resolve_python(target.root, options.python) if runs_env_code else None
    job = _Job(
        settings=_settings(options, target, plan, timeouts, python),
        plan=plan,
        target=target,
        notes=notes,
        on_episode=options.on_episode,
        started_at=started_at,
        t_start=t_start,
        prior=tuple(prior),
    )
    urls = [normalise_url(u) for u in options.urls]
    _start_run_dir(job, options, urls)
    server = None
    try:
        if not urls:
            server = _start_server(target, python)
            server_start_s = server.wait_healthy(timeout_s=timeouts.startup_s)
            return _run(job, [server.url], server, server_start_s)
        return _run(job, urls, None, None)
    finally:
        if server is not None:
            server.stop()


def _load_target(options: EvalOptions) -> _Target:
    """Read the environment's manifest (``path``, or ``.`` without ``url``).

    Raises:
        SpecError: the manifest cannot be read.
    """
    project = None
    if not options.urls or options.path is not None:
        project = EnvProject.load(options.path if options.path is not None else ".")
    manifest = project.manifest if project else None
    spec = env_spec(manifest)
    lo_hi = (float(spec.reward_range[0]), float(spec.reward_range[1])) if manifest else (0.0, 1.0)
    root = project.root if project else Path.cwd().resolve()
    return _Target(project=project, spec=spec, reward_range=lo_hi, root=root)


def _settings(
    options: EvalOptions, target: _Target, plan: PolicyPlan, timeouts: Timeouts, python: str | None
) -> EvalSettings:
    """The run's resolved settings: the step cap falls back to the manifest's, then to
    :data:`EVAL_DEFAULT_MAX_STEPS`; the temperature to 0 for single rollouts, else 1
    (identical rollouts make groups pointless)."""
    spec = target.spec
    manifest_steps = spec.max_steps if target.manifest and spec.max_steps else None
    temperature = options.temperature
    if temperature is None:
        temperature = 0.0 if options.group_size == 1 else 1.0
    return EvalSettings(
        policy=plan.name,
        model=plan.model,
        base_url=plan.base_url,
        api_key_env=plan.key_env,
        episodes=options.episodes,
        group_size=options.group_size,
        concurrency=options.concurrency,
        max_steps=options.max_steps or manifest_steps or EVAL_DEFAULT_MAX_STEPS,
        temperature=temperature,
        seed=options.seed,
        out_dir=Path(options.out_dir) if options.out_dir is not None else None,
        system_prompt=options.system_prompt,
        max_tokens=options.max_tokens,
        max_retries=options.max_retries,
        timeouts=timeouts,
        python=python,
        session_retries=options.session_retries,
    )


def _start_server(target: _Target, python: str | None) -> ServerProcess:
    """Start the environment's server on a free port of 127.0.0.1 (the caller waits for it
    to be healthy and stops it).

    Raises:
        ServerStartError: it did not start.
    """
    manifest = target.manifest
    if target.project is None or manifest is None:
        raise InternalError("evaluate: no environment directory to start a server from.")
    return start_server(target.project.root, manifest.app, python=python)


def _fetch_json(url: str, timeout_s: float) -> dict[str, Any]:
    """``GET url`` as a JSON object.

    Raises:
        WireError: no answer, an HTTP error, or an answer that is not a JSON object.
    """
    import httpx

    try:
        r = httpx.get(url, timeout=timeout_s, trust_env=False, verify=tls())
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


def _stop_server(server: ServerProcess | None, notes: Notes) -> None:
    """Stop the server envkit started; note the processes that had escaped its group."""
    if server is None:
        return
    server.stop(grace_s=STOP_GRACE_S)
    if server.strays:
        notes.add(
            f"Stopped {len(server.strays)} process(es) that had left the server's process "
            f"group: {'; '.join(server.strays[:5])}."
        )


def _policy_factory(job: _Job, env_url: str) -> tuple[PolicyFactory, dict[str, Any]]:
    """The policy factory, from the server's ``/schema`` (and ``/metadata`` for ``openai``),
    and that ``/schema`` body (the run's schema digest is made of it).

    Raises:
        WireError: ``/schema`` cannot be read or has no ``action`` JSON Schema.
    """
    reply_s = job.settings.timeouts.reply_s
    schemas = _fetch_json(f"{env_url}/schema", reply_s)
    if not isinstance(schemas.get("action"), dict):
        raise WireError(
            f"GET {env_url}/schema has no `action` JSON Schema.",
            hint="Check the server runs OpenEnv's create_app.",
        )
    metadata: dict[str, Any] = {}
    if job.plan.name == "openai":
        try:
            metadata = _fetch_json(f"{env_url}/metadata", reply_s)
        except WireError:
            metadata = {}
    factory = PolicyFactory.create(job.settings, job.plan, schemas, metadata, job.target.root)
    return factory, schemas


def _start_run_dir(job: _Job, options: EvalOptions, urls: list[str]) -> None:
    """Write ``run.json`` and the kept episodes into the run directory before the server
    starts (nothing without ``out_dir``), so even a run killed at once can be resumed.

    Raises:
        DestinationError: the directory cannot be created or written.
    """
    out_dir = job.settings.out_dir
    if out_dir is None:
        return
    target = job.target
    environment = {
        # With --url too: the directory whose manifest (reward range, oracle) was read.
        "path": str(target.project.root) if target.project else None,
        "urls": urls,
        "name": target.manifest.name if target.manifest else None,
    }
    meta = run_metadata(
        stored_options(job.settings, options),
        environment,
        started_at=job.started_at.isoformat(timespec="seconds"),
    )
    write_run_start(out_dir, meta, [e.to_json() for e in job.prior])


def _recording(job: _Job) -> Callable[[EpisodeRecord, int, int], None]:
    """``on_episode`` that first appends the episode to ``trajectories.jsonl`` (flushed), then
    calls the caller's ``on_episode``."""
    out_dir, then = job.settings.out_dir, job.on_episode

    def on_episode(record: EpisodeRecord, finished: int, total: int) -> None:
        if out_dir is not None:
            append_record(out_dir, record.to_json())
        if then is not None:
            then(record, finished, total)

    return on_episode


def _run(
    job: _Job, urls: list[str], server: ServerProcess | None, server_start_s: float | None
) -> EvalResult:
    """Play the run on the servers at ``urls``, write its files, and return or raise."""
    settings = job.settings
    env_url = urls[0]
    factory, schemas = _policy_factory(job, env_url)
    pool = WorkerPool(
        settings,
        urls,
        hi=job.target.reward_range[1],
        deadline=settings.timeouts.deadline(job.t_start),
        server=server,
        notes=job.notes,
        on_episode=_recording(job),
        prior=list(job.prior),
    )
    try:
        pool.run(factory.make)
    finally:
        pool.stop()
        factory.close()
        _stop_server(server, job.notes)
    outcome = pool.outcome()
    if outcome.retried:
        job.notes.add(
            f"{outcome.retried} episode(s) lost their session and were played again from "
            f"reset on a fresh one (--session-retries {settings.session_retries})."
        )
    records = [e.to_json() for e in outcome.episodes]
    target = job.target
    env = EnvFacts(
        name=target.manifest.name if target.manifest else None,
        path=str(target.project.root) if target.project else None,
        url=env_url,
        urls=tuple(urls),
        started_by_envkit=server is not None,
        reward_range=target.reward_range,
    )
    summary = EvalSummary(
        settings=settings,
        env=env,
        outcome=outcome,
        prompt=factory.prompt,
        started_at=job.started_at,
        wall_s=time.perf_counter() - job.t_start,
        server_start_s=server_start_s,
        notes=job.notes.items,
    )
    summary_json = summary.to_json(records)
    summary_json["versions"] = _versions(target, schemas)
    result = EvalResult(
        summary=summary_json,
        episodes=outcome.finished,
        out_dir=settings.out_dir,
        notes=job.notes.items,
        interrupted=outcome.interrupted,
        lost=outcome.lost,
    )
    plot_name = target.manifest.name if target.manifest else env_url
    title = " · ".join(x for x in (plot_name, settings.policy, settings.model) if x)
    write_files(result, records, title=title, reward_range=target.reward_range)
    _raise_if_stopped(result, outcome.fatal)
    return result


def _versions(target: _Target, schemas: dict[str, Any]) -> dict[str, Any]:
    """``summary.json``'s ``versions``: the environment digest of the directory (``None``
    with ``--url`` alone) and the schema digest of the ``/schema`` the run played by
    (docs/versions.md); nothing is imported or started for them."""
    envdir = EnvDir(target.project.root) if target.project else None
    return digests_of(envdir, schemas, None).to_dict()


def _raise_if_stopped(result: EvalResult, fatal: BaseException | None) -> None:
    """Raise what stopped the run early (telling where the finished episodes went), or
    :class:`EvalInterrupted` after Ctrl-C."""
    if fatal is not None:
        if isinstance(fatal, EnvkitError) and result.out_dir is not None:
            extra = (
                f"{len(result.episodes)} finished episode(s) and a partial summary were "
                f"written to {result.out_dir}."
            )
            fatal.details = f"{fatal.details}\n{extra}" if fatal.details else extra
        raise fatal
    if result.interrupted:
        raise EvalInterrupted(result)
