"""The worker pool of an evaluation run: WebSocket sessions, one worker thread per session,
the shared stop conditions, and the episodes they play.

Sessions go over the WebSocket (:class:`envkit.wire.EnvSession`), one per worker thread; up to
``concurrency`` workers run in parallel, capped by the server's capacity (a session refused
with CAPACITY_REACHED is closed and the run goes on with fewer; :func:`envkit.wire.open_sessions`,
docs/protocol.md). Every answer of the server is awaited at most ``reply_timeout_s``; three
lost sessions in a row, a server that exits, or the ``timeout_s`` budget stop the run.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envkit.errors import EnvkitError, EvalAbortedError, PolicyError, WireError
from envkit.evaluation.options import Notes
from envkit.evaluation.policies import EpisodePolicy
from envkit.evaluation.records import EpisodeRecord, EvalSettings, StepRecord
from envkit.wire import EnvSession, Refusal

MAX_SESSION_LOSSES = 3  # lost sessions in a row (over all workers) that stop the run
RESULT_POLL_S = 0.2  # how often the main thread checks the budget and the server, seconds
_SUCCESS_EPS = 1e-9

Task = tuple[int, int, int, int]  # (episode, group, member, seed): EvalSettings.tasks()


@dataclass
class PoolOutcome:
    """What the worker pool produced.

    Attributes:
        episodes: the finished episodes, ordered by run-wide index.
        concurrency_used: sessions the workers played on (after any capacity cap).
        capacity: the server's ``max_sessions`` when it capped the concurrency, else ``None``.
        fatal: what stopped the run early (:class:`EvalAbortedError`,
            :class:`envkit.errors.ModelEndpointError`, a worker's unexpected exception), or
            ``None``.
        interrupted: Ctrl-C (KeyboardInterrupt) stopped the run.
    """

    episodes: list[EpisodeRecord]
    concurrency_used: int
    capacity: int | None
    fatal: BaseException | None
    interrupted: bool


class _Stopped(Exception):
    """The run is stopping; the episode being played is dropped."""


class _Lost(Exception):
    """The session failed (no answer in time, or closed) during ``what``."""

    def __init__(self, what: str, exc: WireError):
        super().__init__(f"{what}: {exc.message}")
        self.text = f"{what}: {exc.message}"


@dataclass
class _Ctx:
    """What the workers share."""

    max_steps: int
    hi: float
    url: str
    reply_s: float
    tasks: queue.Queue = field(default_factory=queue.Queue)
    results: queue.Queue = field(default_factory=queue.Queue)
    stop: threading.Event = field(default_factory=threading.Event)
    losses: int = 0  # sessions lost in a row, over all workers (reset by a finished episode)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class _Turn:
    """Where an episode stands between steps."""

    observation: Any
    reward: Any = None
    last_error: str | None = None


class WorkerPool:
    """Plays a run's episodes on parallel sessions.

    Use: :meth:`run`, then (in a ``finally``) :meth:`stop`, then :meth:`outcome`.

    Args:
        settings: the run's settings (tasks, ``concurrency``, ``max_steps``, reply timeout).
        url: the server's base URL.
        hi: the manifest's maximum reward (an episode succeeds when a step reaches it).
        deadline: ``time.perf_counter()`` value at which the ``--timeout`` budget runs out,
            or ``None``.
        server: the :class:`envkit.server.ServerProcess` envkit started (watched: the run
            stops when it exits), or ``None``.
        notes: gets a note when the server's capacity caps the concurrency.
        on_episode: called in the calling thread as ``on_episode(record, finished, total)``.
    """

    def __init__(
        self,
        settings: EvalSettings,
        url: str,
        hi: float,
        deadline: float | None,
        server: Any,
        notes: Notes,
        on_episode: Callable[[EpisodeRecord, int, int], None] | None,
    ):
        self.settings = settings
        self._deadline = deadline
        self._server = server
        self._notes = notes
        self._on_episode = on_episode
        self._ctx = _Ctx(
            max_steps=settings.max_steps, hi=float(hi), url=url, reply_s=settings.timeouts.reply_s
        )
        for task in settings.tasks():
            self._ctx.tasks.put(task)
        self._finished: list[EpisodeRecord] = []
        self._sessions: list[EnvSession] = []
        self._policies: list[EpisodePolicy] = []
        self._holders: list[dict[str, Any]] = []
        self._capacity: int | None = None
        self._fatal: BaseException | None = None
        self._interrupted = False

    def run(self, make_policy: Callable[[], EpisodePolicy]) -> None:
        """Open the sessions, make a policy per session and play until every task is done or
        a stop condition holds. Ctrl-C and envkit errors (a policy that cannot load) end up
        in :meth:`outcome`; other exceptions propagate."""
        settings = self.settings
        try:
            self._sessions, self._capacity = _open_sessions(
                self._ctx.url,
                min(settings.concurrency, settings.total),
                self._ctx.reply_s,
                self._notes,
            )
            for _ in self._sessions:
                self._policies.append(make_policy())
            for session, policy in zip(self._sessions, self._policies):
                holder = {"session": session}
                self._holders.append(holder)
                threading.Thread(
                    target=_worker,
                    args=(session, policy, self._ctx, holder),
                    daemon=True,
                    name="envkit-eval-worker",
                ).start()
            self._wait(running=len(self._sessions))
        except KeyboardInterrupt:
            self._interrupted = True
        except EnvkitError as exc:
            self._fatal = exc

    def _wait(self, running: int) -> None:
        """Collect the workers' results until ``running`` workers are done or the run stops."""
        total = self.settings.total
        while running:
            self._fatal = self._stop_reason()
            if self._fatal is not None:
                return
            try:
                kind, payload = self._ctx.results.get(timeout=RESULT_POLL_S)
            except queue.Empty:
                continue
            if kind == "episode":
                self._finished.append(payload)
                if self._on_episode:
                    self._on_episode(payload, len(self._finished), total)
            elif kind == "fatal":
                self._fatal = payload
                return
            else:
                running -= 1

    def _stop_reason(self) -> EvalAbortedError | None:
        """Why the run must stop now (budget spent, server exited), else ``None``."""
        done, total = len(self._finished), self.settings.total
        if self._deadline is not None and time.perf_counter() > self._deadline:
            return EvalAbortedError(
                f"The run exceeded --timeout {self.settings.timeouts.budget_s:g} s with "
                f"{done} of {total} episodes finished.",
                hint="Raise --timeout, or play fewer --episodes.",
            )
        server = self._server
        if server is not None and not server.alive():
            tail = server.log_tail(20)
            return EvalAbortedError(
                f"The environment server exited with code {server.popen.returncode} "
                f"during the run ({done} of {total} episodes finished).",
                hint="Fix the error in its log (`envkit validate` shows it too).",
                details=tail or None,
            )
        return None

    def stop(self) -> None:
        """Tell the workers to stop; close every session and policy. Idempotent."""
        self._ctx.stop.set()
        for holder in self._holders:
            holder["session"].close()
        for session in self._sessions:
            session.close()
        for policy in self._policies:
            try:
                policy.close()
            except Exception:  # noqa: BLE001 - a policy that fails to close must not hide the run
                pass

    def outcome(self) -> PoolOutcome:
        """What the run produced, including episodes that finished while it was stopping."""
        while True:
            try:
                kind, payload = self._ctx.results.get_nowait()
            except queue.Empty:
                break
            if kind == "episode" and not any(e.episode == payload.episode for e in self._finished):
                self._finished.append(payload)
        self._finished.sort(key=lambda e: e.episode)
        return PoolOutcome(
            episodes=self._finished,
            concurrency_used=len(self._sessions),
            capacity=self._capacity,
            fatal=self._fatal,
            interrupted=self._interrupted,
        )


# -- sessions --------------------------------------------------------------------------------


def _capacity_error(refusal: Refusal, url: str) -> WireError:
    data = refusal.data
    return WireError(
        f"The server at {url} refused every session: CAPACITY_REACHED "
        f"({data.get('active_sessions', '?')}/{data.get('max_sessions', '?')} sessions active).",
        hint="Close other clients (leaked sessions hold slots until the server restarts, "
        "huggingface/OpenEnv#1000) or raise max_concurrent_envs in server/app.py.",
    )


def _open_sessions(
    url: str, want: int, reply_s: float, notes: Notes
) -> tuple[list[EnvSession], int | None]:
    """Sessions for the workers (:func:`envkit.wire.open_sessions`) and the capacity that
    capped them (or ``None``); CAPACITY_REACHED caps the concurrency with a note.

    Raises:
        WireError: the server refused the first session, or refused one for another reason.
    """
    from envkit.wire import CAPACITY_REACHED, open_sessions

    pool = open_sessions(url, want, timeout_s=reply_s)
    refusal = pool.refusal
    if refusal is None:
        return pool.sessions, None
    if refusal.code == CAPACITY_REACHED and pool.sessions:
        notes.add(
            f"--concurrency {want} capped to {len(pool.sessions)}: the server answered "
            f"CAPACITY_REACHED for session {len(pool.sessions) + 1} (max_sessions="
            f"{refusal.data.get('max_sessions', '?')}, "
            f"active={refusal.data.get('active_sessions', '?')}). Raise "
            "max_concurrent_envs to run more in parallel."
        )
        return pool.sessions, refusal.capacity
    pool.close()
    if refusal.code == CAPACITY_REACHED:
        raise _capacity_error(refusal, url)
    raise WireError(
        f"The server at {url} refused a session: {refusal.code}: {refusal.message}.",
        hint="Check the server log; `envkit validate` diagnoses sessions.",
    )


def _error_text(exc: Any) -> str:
    """One line for an error frame: its code, message and first validation error."""
    data = getattr(exc, "data", {}) or {}
    msg = str(data.get("message", "")).strip()
    errors = data.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        first = errors[0]
        loc = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        msg = f"{msg}: {loc + ': ' if loc else ''}{first.get('msg', '')}"
    return f"{exc.code}: {msg}"[:500]


# -- workers ---------------------------------------------------------------------------------


def _worker(session: EnvSession, policy: EpisodePolicy, ctx: _Ctx, holder: dict[str, Any]) -> None:
    """Play tasks until none is left or the run stops; every outcome goes to ``ctx.results``
    as ``("episode", record)``, ``("fatal", exc)`` and finally ``("done", None)``."""
    try:
        while not ctx.stop.is_set():
            try:
                task = ctx.tasks.get_nowait()
            except queue.Empty:
                break
            try:
                record = _play(session, policy, task, ctx)
            except _Stopped:
                return
            except _Lost as lost:
                if ctx.stop.is_set():
                    return
                fresh = _after_loss(session, task, lost, ctx)
                if fresh is None:
                    return
                session = holder["session"] = fresh
                continue
            if ctx.stop.is_set():
                return
            with ctx.lock:
                ctx.losses = 0
            ctx.results.put(("episode", record))
    except BaseException as exc:  # noqa: BLE001 - handed to the main thread
        if not ctx.stop.is_set():
            ctx.results.put(("fatal", exc))
    finally:
        ctx.results.put(("done", None))


def _after_loss(session: EnvSession, task: Task, lost: _Lost, ctx: _Ctx) -> EnvSession | None:
    """Record the episode a transport failure ended, then open one fresh session, unless
    sessions keep getting lost (a hung or crashing server): then report the abort and return
    ``None``."""
    episode, group, member, seed = task
    record = EpisodeRecord(
        episode=episode,
        group=group,
        member=member,
        seed=seed,
        error=f"session lost: {lost.text}",
    )
    ctx.results.put(("episode", record))
    with ctx.lock:
        ctx.losses += 1
        losses = ctx.losses
    if losses >= MAX_SESSION_LOSSES:
        aborted = EvalAbortedError(
            f"Stopped after {losses} lost sessions in a row; the last: {lost.text.rstrip('.')}.",
            hint="Most likely `reset` or `step` hangs or crashes: `envkit validate` tells "
            "which. Raise --reply-timeout if answers are just slow.",
        )
        ctx.results.put(("fatal", aborted))
        return None
    session.close()
    return EnvSession(ctx.url, timeout_s=ctx.reply_s)


def _play(session: EnvSession, policy: EpisodePolicy, task: Task, ctx: _Ctx) -> EpisodeRecord:
    """One episode.

    Raises:
        _Lost: the session failed (transport).
        _Stopped: the run is stopping.
        ModelEndpointError: the model endpoint failed (fatal for the run).
    """
    episode, group, member, seed = task
    t0 = time.perf_counter()
    rec = EpisodeRecord(episode=episode, group=group, member=member, seed=seed)
    policy.begin(episode, seed)
    turn = _reset(session, rec, seed)
    if turn is None:
        return _finish(rec, t0, ctx.hi)
    while not rec.done and len(rec.steps) < ctx.max_steps:
        if ctx.stop.is_set():
            raise _Stopped
        step = _decide(policy, rec, turn)
        if step is None:
            break
        if ctx.stop.is_set():
            raise _Stopped
        if step.action is None:
            turn.last_error = step.error
            continue
        if not _send(session, rec, step, turn, seed):
            break
    return _finish(rec, t0, ctx.hi)


def _reset(session: EnvSession, rec: EpisodeRecord, seed: int) -> _Turn | None:
    """Reset for ``rec``; ``None`` when the environment answered an error (in ``rec.error``).

    Raises:
        _Lost: the session failed.
    """
    from envkit.wire import EnvErrorFrame

    try:
        first = session.reset(seed=seed)
    except EnvErrorFrame as exc:
        rec.error = f"reset failed: {_error_text(exc)}"
        return None
    except WireError as exc:
        raise _Lost(f"`reset(seed={seed})`", exc) from None
    rec.reset = {
        "observation": first.observation,
        "reward": first.reward,
        "done": first.done,
        "latency_s": first.latency_s,
    }
    rec.done = first.done
    return _Turn(observation=first.observation)


def _decide(policy: EpisodePolicy, rec: EpisodeRecord, turn: _Turn) -> StepRecord | None:
    """Ask the policy for the next action and record the step; a reply that is not an action
    is a step with ``parse_error``. ``None``: the policy failed and the episode ends."""
    n = len(rec.steps)
    p0 = time.perf_counter()
    try:
        decision = policy.act(
            turn.observation, reward=turn.reward, step=n, last_error=turn.last_error
        )
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
        return None
    step = StepRecord(
        step=n + 1,
        action=decision.action,
        policy_latency_s=time.perf_counter() - p0,
        reply=decision.reply,
        usage=decision.usage or None,
    )
    rec.steps.append(step)
    if decision.action is None:
        step.error, step.parse_error = decision.error, True
    return step


def _send(
    session: EnvSession, rec: EpisodeRecord, step: StepRecord, turn: _Turn, seed: int
) -> bool:
    """Send ``step``'s action and record the answer. ``False``: the environment answered an
    error that ends the episode (a VALIDATION_ERROR does not: the policy hears of it).

    Raises:
        _Lost: the session failed.
    """
    from envkit.wire import EnvErrorFrame

    try:
        res = session.step(step.action)
    except EnvErrorFrame as exc:
        step.error, step.error_code = _error_text(exc), exc.code
        if exc.code == "VALIDATION_ERROR":
            turn.last_error = f"the environment rejected it: {_error_text(exc)}"
            return True
        rec.error = f"step failed: {_error_text(exc)}"
        return False
    except WireError as exc:
        raise _Lost(f"`step` {step.step} of seed {seed}", exc) from None
    step.observation, step.reward, step.done = res.observation, res.reward, res.done
    step.latency_s = res.latency_s
    turn.observation, turn.reward, turn.last_error = res.observation, res.reward, None
    rec.done = res.done
    return True


def _finish(rec: EpisodeRecord, t0: float, hi: float) -> EpisodeRecord:
    """Fill in ``rec``'s return, best reward, success, truncation and duration."""
    from envkit.wire import is_finite_number

    rewards = [float(s.reward) for s in rec.steps if is_finite_number(s.reward)]
    rec.return_ = float(sum(rewards))
    rec.max_reward = max(rewards) if rewards else None
    rec.success = any(r >= hi - _SUCCESS_EPS for r in rewards)
    rec.truncated = (not rec.done) and rec.error is None
    rec.duration_s = time.perf_counter() - t0
    return rec
