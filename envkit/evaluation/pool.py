"""The worker pool of an evaluation run: WebSocket sessions, one worker thread per session,
the shared stop conditions, and the episodes they play.

Sessions go over the WebSocket (:class:`envkit.wire.EnvSession`), one per worker thread; up to
``concurrency`` workers run in parallel. With several URLs (replicas, several Spaces) session
``i`` goes to URL ``i mod n`` (round-robin). A session refused with CAPACITY_REACHED is tried
on the other URLs, then again after a short backoff (:data:`CAPACITY_RETRIES` rounds: behind
a balancer a new connection may land on another replica); only then does the server's
capacity cap the concurrency and the run goes on with fewer (docs/protocol.md). Every answer
of the server is awaited at most ``reply_timeout_s``.

A session lost mid-episode (the connection dropped or closed: a replica gone) is replaced by a
fresh one, on the same URL or the next that accepts it, and the episode is played again from
reset with the same seed, up to ``session_retries`` times; an answer that did not come in time
is not retried (a hung server would cost the wait again). An episode still lost is recorded as
*lost* (not a result: the statistics leave it out, ``--resume`` plays it again). Three lost
episodes in a row, a server that exits, or the ``timeout_s`` budget stop the run.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from envkit.blind import shapes
from envkit.errors import EnvkitError, EvalAbortedError, PolicyError, WireError
from envkit.evaluation.options import Notes
from envkit.evaluation.policies import EpisodePolicy
from envkit.evaluation.records import SESSION_LOST, EpisodeRecord, EvalSettings, StepRecord
from envkit.wire import (
    CAPACITY_REACHED,
    CONNECT_FAILED,
    MAX_OBSERVATION_BYTES,
    OBSERVATION_TOO_LARGE,
    EnvErrorFrame,
    EnvSession,
    Refusal,
    WireTimeout,
    is_finite_number,
    probe_session,
)

if TYPE_CHECKING:
    from envkit.server import ServerProcess

MAX_SESSION_LOSSES = 3  # lost episodes in a row (over all workers) that stop the run
#: ``error_code`` of a tool call the environment answered with a tool error (an unknown
#: tool, arguments its input schema refuses): an invalid action, as a VALIDATION_ERROR is.
TOOL_ERROR = "TOOL_ERROR"
RESULT_POLL_S = 0.2  # how often the main thread checks the budget and the server, seconds
_SUCCESS_EPS = 1e-9
CAPACITY_RETRIES = 3  # more rounds over the URLs after a CAPACITY_REACHED refusal
CAPACITY_BACKOFF_S = 0.25  # seconds before the first retry round; doubles each round
REPLICAS_HINT = "or add replicas (`envkit run --docker --replicas N`)"

Task = tuple[int, int, int, int]  # (episode, group, member, seed): EvalSettings.tasks()


@dataclass
class PoolOutcome:
    """What the worker pool produced.

    Attributes:
        episodes: the played episodes, lost ones included, ordered by run-wide index (the
            lines of ``trajectories.jsonl``).
        concurrency_used: sessions the workers played on (after any capacity cap).
        capacity: the server's ``max_sessions`` when it capped the concurrency, else ``None``.
        fatal: what stopped the run early (:class:`EvalAbortedError`,
            :class:`envkit.errors.ModelEndpointError`, a worker's unexpected exception), or
            ``None``.
        interrupted: Ctrl-C (KeyboardInterrupt) stopped the run.
        kept: how many of ``episodes`` an earlier process of the run played (``--resume``).
        retried: episodes played again on a fresh session after theirs was lost.
    """

    episodes: list[EpisodeRecord]
    concurrency_used: int
    capacity: int | None
    fatal: BaseException | None
    interrupted: bool
    kept: int = 0
    retried: int = 0

    @property
    def finished(self) -> list[EpisodeRecord]:
        """The episodes that are results (not lost)."""
        return [e for e in self.episodes if not e.lost]

    @property
    def lost(self) -> list[EpisodeRecord]:
        """The episodes whose session was lost, also after the retries."""
        return [e for e in self.episodes if e.lost]


class _Stopped(Exception):
    """The run is stopping; the episode being played is dropped."""


class _Lost(Exception):
    """The session failed (no answer in time, or closed) during ``what``."""

    def __init__(self, what: str, exc: WireError):
        super().__init__(f"{what}: {exc.message}")
        self.text = f"{what}: {exc.message}"
        self.timed_out = isinstance(exc, WireTimeout)


@dataclass
class _Holder:
    """A worker's current session and the base URL it is on (replaced after a loss)."""

    session: EnvSession
    url: str


@dataclass
class _Ctx:
    """What the workers share."""

    max_steps: int
    hi: float
    urls: list[str]
    reply_s: float
    session_retries: int = 0
    tasks: queue.Queue = field(default_factory=queue.Queue)
    results: queue.Queue = field(default_factory=queue.Queue)
    stop: threading.Event = field(default_factory=threading.Event)
    losses: int = 0  # episodes lost in a row, over all workers (reset by a finished one)
    retried: int = 0  # episodes played again after a lost session
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
        urls: the servers' base URLs (>= 1; sessions are spread over them round-robin).
        hi: the manifest's maximum reward (an episode succeeds when a step reaches it).
        deadline: ``time.perf_counter()`` value at which the ``--timeout`` budget runs out,
            or ``None``.
        server: the :class:`envkit.server.ServerProcess` envkit started (watched: the run
            stops when it exits), or ``None``.
        notes: gets a note when the server's capacity caps the concurrency.
        on_episode: called in the calling thread as ``on_episode(record, finished, total)``;
            ``finished`` counts ``prior`` too.
        prior: episodes an earlier process of this run finished (``--resume``): their tasks
            are not played again and they are part of :meth:`outcome`.
    """

    def __init__(
        self,
        settings: EvalSettings,
        urls: list[str],
        hi: float,
        deadline: float | None,
        server: ServerProcess | None,
        notes: Notes,
        on_episode: Callable[[EpisodeRecord, int, int], None] | None,
        prior: list[EpisodeRecord] | None = None,
    ):
        self.settings = settings
        self._deadline = deadline
        self._server = server
        self._notes = notes
        self._on_episode = on_episode
        self._ctx = _Ctx(
            max_steps=settings.max_steps,
            hi=float(hi),
            urls=list(urls),
            reply_s=settings.timeouts.reply_s,
            session_retries=settings.session_retries,
        )
        self._finished: list[EpisodeRecord] = list(prior or ())
        self._kept = len(self._finished)
        done = {e.episode for e in self._finished if not e.lost}
        self._finished = [e for e in self._finished if not e.lost]
        self._todo = [t for t in settings.tasks() if t[0] not in done]
        for task in self._todo:
            self._ctx.tasks.put(task)
        self._sessions: list[EnvSession] = []
        self._policies: list[EpisodePolicy] = []
        self._holders: list[_Holder] = []
        self._capacity: int | None = None
        self._fatal: BaseException | None = None
        self._interrupted = False

    def run(self, make_policy: Callable[[], EpisodePolicy]) -> None:
        """Open the sessions, make a policy per session and play until every task is done or
        a stop condition holds. Ctrl-C and envkit errors (a policy that cannot load) end up
        in :meth:`outcome`; other exceptions propagate."""
        settings = self.settings
        try:
            if not self._todo:
                return
            opened, self._capacity = _open_sessions(
                self._ctx.urls,
                min(settings.concurrency, len(self._todo)),
                self._ctx.reply_s,
                self._notes,
            )
            self._sessions = [session for session, _ in opened]
            for _ in self._sessions:
                self._policies.append(make_policy())
            for (session, url), policy in zip(opened, self._policies):
                holder = _Holder(session, url)
                self._holders.append(holder)
                threading.Thread(
                    target=_worker,
                    args=(policy, self._ctx, holder),
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
        done, total = sum(1 for e in self._finished if not e.lost), self.settings.total
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
            holder.session.close()
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
            kept=self._kept,
            retried=self._ctx.retried,
        )


# -- sessions --------------------------------------------------------------------------------


def _capacity_error(refusal: Refusal, urls: list[str]) -> WireError:
    data = refusal.data
    where = f"The server at {urls[0]}" if len(urls) == 1 else f"Every one of {len(urls)} servers"
    return WireError(
        f"{where} refused every session: CAPACITY_REACHED "
        f"({data.get('active_sessions', '?')}/{data.get('max_sessions', '?')} sessions active).",
        hint="Close other clients (leaked sessions hold slots until the server restarts, "
        "huggingface/OpenEnv#1000), raise max_concurrent_envs in server/app.py, "
        f"{REPLICAS_HINT}.",
    )


def _open_sessions(
    urls: list[str], want: int, reply_s: float, notes: Notes
) -> tuple[list[tuple[EnvSession, str]], int | None]:
    """Sessions for the workers, each with its server's base URL, and the capacity that
    capped them (or ``None``); CAPACITY_REACHED (after the retries of :func:`_open_one`)
    caps the concurrency with a note.

    Args:
        urls: base URLs; session ``i`` tries ``urls[i % n]`` first.
        want: sessions wanted, >= 1.
        reply_s: seconds for connecting and for each probe's answer.
        notes: gets the capacity note.

    Raises:
        WireError: every URL refused the first session, or one refused a session for
            another reason (or could not be reached).
        WireTimeout: a probe got no answer (the server hangs). Sessions opened so far are
            closed first.
    """
    opened: list[tuple[EnvSession, str]] = []
    refusal: Refusal | None = None
    try:
        for i in range(want):
            got, refusal = _open_one(urls, i, reply_s)
            if got is None:
                break
            opened.append(got)
    except BaseException:
        for session, _ in opened:
            session.close()
        raise
    if refusal is None:
        return opened, None
    if refusal.code == CAPACITY_REACHED and opened:
        notes.add(
            f"--concurrency {want} capped to {len(opened)}: the server answered "
            f"CAPACITY_REACHED for session {len(opened) + 1} (max_sessions="
            f"{refusal.data.get('max_sessions', '?')}, "
            f"active={refusal.data.get('active_sessions', '?')}), also after "
            f"{CAPACITY_RETRIES} retries. Raise max_concurrent_envs to run more in parallel, "
            f"{REPLICAS_HINT}."
        )
        return opened, refusal.capacity
    for session, _ in opened:
        session.close()
    if refusal.code == CAPACITY_REACHED:
        raise _capacity_error(refusal, urls)
    where = refusal.data.get("url", urls[0])
    raise WireError(
        f"The server at {where} refused a session: {refusal.code}: {refusal.message}.",
        hint="Check the server log; `envkit validate` diagnoses sessions.",
    )


def _open_one(
    urls: list[str], start: int, reply_s: float, *, skip_unreachable: bool = False
) -> tuple[tuple[EnvSession, str] | None, Refusal | None]:
    """One probed session: ``urls[start % n]`` first, then the next URLs; when all answer
    CAPACITY_REACHED, :data:`CAPACITY_RETRIES` more rounds after a doubling backoff.

    Args:
        skip_unreachable: a URL that cannot be connected to is passed over for the next one
            (a fresh session after a lost one: its replica may be gone), instead of ending
            the search.

    Returns:
        ``((session, url), None)``, or ``(None, refusal)``: the last CAPACITY_REACHED, or the
        first other refusal (``CONNECT_FAILED`` with the URL when none answers).

    Raises:
        WireTimeout: a probe got no answer.
    """
    refusal: Refusal | None = None
    for attempt in range(CAPACITY_RETRIES + 1):
        if attempt:
            time.sleep(CAPACITY_BACKOFF_S * 2 ** (attempt - 1))
        full = False
        for k in range(len(urls)):
            url = urls[(start + k) % len(urls)]
            try:
                session = EnvSession(url, timeout_s=reply_s)
            except WireError as exc:
                refusal = Refusal(CONNECT_FAILED, {"message": exc.message, "url": url})
                if skip_unreachable:
                    continue
                return None, refusal
            try:
                refusal = probe_session(session)
            except BaseException:
                session.close()
                raise
            if refusal is None:
                return (session, url), None
            session.close()
            if refusal.code != CAPACITY_REACHED:
                refusal.data.setdefault("url", url)
                return None, refusal
            full = True
        if not full:  # none was full, none answered: waiting frees no slot
            break
    return None, refusal


def _reopen(ctx: _Ctx, url: str) -> tuple[EnvSession, str]:
    """A fresh probed session after a lost one: on ``url`` first, then on the other URLs.

    Raises:
        WireError: no URL accepted a session (the message names the last refusal).
        WireTimeout: a probe got no answer.
    """
    start = ctx.urls.index(url) if url in ctx.urls else 0
    got, refusal = _open_one(ctx.urls, start, ctx.reply_s, skip_unreachable=True)
    if got is not None:
        return got
    if refusal is not None and refusal.code == CAPACITY_REACHED:
        raise _capacity_error(refusal, ctx.urls)
    data = refusal.data if refusal is not None else {}
    raise WireError(
        f"No server accepted a new session after one was lost: "
        f"{refusal.code if refusal else CONNECT_FAILED}: "
        f"{data.get('message', '')} ({data.get('url', url)}).",
        hint="Check the servers are up (`envkit validate --url URL`); `envkit eval --resume "
        "DIR` plays the missing episodes once they are.",
    )


def _error_text(exc: EnvErrorFrame) -> str:
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


def _worker(policy: EpisodePolicy, ctx: _Ctx, holder: _Holder) -> None:
    """Play tasks until none is left or the run stops; every outcome goes to ``ctx.results``
    as ``("episode", record)`` (lost ones too), ``("fatal", exc)`` and finally
    ``("done", None)``."""
    try:
        while not ctx.stop.is_set():
            try:
                task = ctx.tasks.get_nowait()
            except queue.Empty:
                break
            try:
                record = _play_retrying(holder, policy, task, ctx)
            except _Stopped:
                return
            if ctx.stop.is_set():
                return
            ctx.results.put(("episode", record))
            with ctx.lock:
                ctx.losses = ctx.losses + 1 if record.lost else 0
                losses = ctx.losses
            if not record.lost:
                continue
            if losses >= MAX_SESSION_LOSSES:
                last = (record.error or "").removeprefix(f"{SESSION_LOST}: ").rstrip(".")
                ctx.results.put(
                    (
                        "fatal",
                        EvalAbortedError(
                            f"Stopped after {losses} lost episodes in a row; the last: {last}.",
                            hint="Most likely `reset` or `step` hangs or crashes: `envkit "
                            "validate` tells which. Raise --reply-timeout if answers are just "
                            "slow.",
                        ),
                    )
                )
                return
            holder.session.close()
            holder.session, holder.url = _reopen(ctx, holder.url)
    except BaseException as exc:  # noqa: BLE001 - handed to the main thread
        if not ctx.stop.is_set():
            ctx.results.put(("fatal", exc))
    finally:
        ctx.results.put(("done", None))


def _play_retrying(holder: _Holder, policy: EpisodePolicy, task: Task, ctx: _Ctx) -> EpisodeRecord:
    """:func:`_play` on the worker's session; after a lost session, again from reset on a
    fresh one (:func:`_reopen`), up to ``ctx.session_retries`` times unless the answer timed
    out. Returns the played episode, or the lost one.

    Raises:
        _Stopped: the run is stopping.
        WireError: no server accepted a fresh session (the lost episode is recorded first).
    """
    retries = 0
    while True:
        try:
            record = _play(holder.session, policy, task, ctx)
        except _Lost as lost:
            if ctx.stop.is_set():
                raise _Stopped from None
            if lost.timed_out or retries >= ctx.session_retries:
                return _lost_record(task, lost, retries)
            holder.session.close()
            try:
                holder.session, holder.url = _reopen(ctx, holder.url)
            except WireError:
                if not ctx.stop.is_set():
                    ctx.results.put(("episode", _lost_record(task, lost, retries)))
                raise
            if retries == 0:
                with ctx.lock:
                    ctx.retried += 1
            retries += 1
        else:
            record.retries = retries
            return record


def _lost_record(task: Task, lost: _Lost, retries: int) -> EpisodeRecord:
    """The record of an episode whose session was lost (after ``retries`` retries)."""
    episode, group, member, seed = task
    after = f" (also on {retries} fresh session{'s' if retries > 1 else ''})" if retries else ""
    return EpisodeRecord(
        episode=episode,
        group=group,
        member=member,
        seed=seed,
        error=f"{SESSION_LOST}: {lost.text}{after}",
        lost=True,
        retries=retries,
    )


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
    try:
        first = session.reset(seed=seed)
    except EnvErrorFrame as exc:
        rec.error = f"reset failed: {_error_text(exc)}"
        return None
    except WireError as exc:
        raise _Lost(f"`reset(seed={seed})`", exc) from None
    too_big = _oversized(first.observation)
    if too_big is not None:
        rec.error = f"reset failed: {OBSERVATION_TOO_LARGE}: {too_big}"
        return None
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
    too_big = _oversized(res.observation)
    if too_big is not None:  # the observation is not kept: the reason it ends the episode
        step.latency_s, step.done = res.latency_s, res.done
        step.error, step.error_code = too_big, OBSERVATION_TOO_LARGE
        rec.error = f"step failed: {OBSERVATION_TOO_LARGE}: {too_big}"
        return False
    step.observation, step.reward, step.done = res.observation, res.reward, res.done
    step.latency_s = res.latency_s
    turn.observation, turn.reward, turn.last_error = res.observation, res.reward, None
    refused = shapes.tool_error(res.observation) if shapes.is_tool_call(step.action) else None
    if refused is not None:  # the tool refused the call: an invalid action, told to the policy
        step.error, step.error_code = refused, TOOL_ERROR
        turn.last_error = f"the tool refused it: {refused}"
    rec.done = res.done
    return True


def _oversized(observation: dict[str, Any]) -> str | None:
    """Why ``observation`` is too large to go on with (over :data:`MAX_OBSERVATION_BYTES` of
    JSON), else ``None``."""
    size = len(json.dumps(observation, separators=(",", ":"), default=str).encode())
    if size <= MAX_OBSERVATION_BYTES:
        return None
    return (
        f"the observation is {size / 2**20:.1f} MiB of JSON, over eval's limit of "
        f"{MAX_OBSERVATION_BYTES / 2**20:g} MiB"
    )


def _finish(rec: EpisodeRecord, t0: float, hi: float) -> EpisodeRecord:
    """Fill in ``rec``'s return, best reward, success, truncation and duration."""
    rewards = [float(s.reward) for s in rec.steps if is_finite_number(s.reward)]
    rec.return_ = float(sum(rewards))
    rec.max_reward = max(rewards) if rewards else None
    rec.success = any(r >= hi - _SUCCESS_EPS for r in rewards)
    rec.truncated = (not rec.done) and rec.error is None
    rec.duration_s = time.perf_counter() - t0
    return rec
