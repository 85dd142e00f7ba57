"""Talking to an environment over the wire: HTTP endpoints and WebSocket sessions.

envkit never imports the environment's code: everything goes through the OpenEnv contract
(docs/protocol.md; openenv-core 0.3.0 and OpenEnv 0.10). Every call has a timeout; a server that hangs or floods
produces a :class:`~envkit.errors.WireError`, never a hung caller.

This module is the one place that decides what "healthy" means (:func:`get_health`), how a
new session is probed (:func:`probe_session`) and how the server's capacity shows
(:func:`open_sessions`); ``validate``, ``eval`` and ``run`` all use it.

Frames (client -> server): ``{"type":"reset","data":{...}}``, ``{"type":"step","data":{action}}``,
``{"type":"state"}``, ``{"type":"close"}``. Server -> client: ``observation``, ``state``,
``error`` frames.
"""

from __future__ import annotations

import functools
import json
import math
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import httpx
from websockets.sync.client import connect

from envkit.errors import WireError


@functools.cache
def tls() -> ssl.SSLContext:
    """The TLS context every ``httpx`` client of envkit verifies with: httpx's default (the
    certifi bundle), built once per process. Building one reads the whole CA bundle (~36 ms
    of CPU); a validate run opens several clients, and most talk plain HTTP to 127.0.0.1."""
    return httpx.create_ssl_context()


MAX_FRAME_BYTES = 16 * 1024 * 1024  # a flooding server is cut off here
# The largest observation envkit goes on with, bytes of JSON: eval ends the episode with
# OBSERVATION_TOO_LARGE on a bigger one (it keeps every observation and writes it to
# trajectories.jsonl; a model could not read it anyway), validate stops its runtime stage
# (every later call would carry as much).
MAX_OBSERVATION_BYTES = 4 * 1024 * 1024
OBSERVATION_TOO_LARGE = "OBSERVATION_TOO_LARGE"


def ws_url(base_url: str) -> str:
    """``http://h:p`` -> ``ws://h:p/ws`` (``https`` -> ``wss``)."""
    base = base_url.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base[len("https://") :] + "/ws"
    if base.startswith("http://"):
        return "ws://" + base[len("http://") :] + "/ws"
    return "ws://" + base + "/ws"


def normalise_url(url: str) -> str:
    """Add ``http://`` when no scheme is given and drop a trailing slash."""
    url = url.strip()
    if "://" not in url:
        url = "http://" + url
    return url.rstrip("/")


@dataclass
class StepResult:
    """One ``observation`` frame.

    Attributes:
        observation: the observation fields (without reward/done, which OpenEnv moves
            to the top level).
        reward: the reward, or ``None`` (OpenEnv sends NaN/inf as ``null``).
        done: whether the episode ended.
        latency_s: seconds between sending the frame and receiving the answer.
        raw: the whole frame ``data``.
        frame_bytes: characters of the answer frame's text (about its bytes: JSON escapes
            what is not ASCII).
    """

    observation: dict[str, Any]
    reward: float | None
    done: bool
    latency_s: float = 0.0
    raw: dict[str, Any] = field(default_factory=dict)
    frame_bytes: int = 0


class WireTimeout(WireError):
    """No answer within the timeout: the server (or the environment behind it) hangs."""


class EnvErrorFrame(WireError):
    """The server answered with an ``error`` frame.

    Attributes:
        code: the frame's ``code`` (``VALIDATION_ERROR``, ``EXECUTION_ERROR``, ...).
        data: the whole frame ``data``.
    """

    def __init__(self, data: dict[str, Any]):
        self.code = str(data.get("code", "UNKNOWN"))
        self.data = data
        super().__init__(f"The server answered {self.code}: {data.get('message', '')}".strip())


class EnvSession:
    """One WebSocket session (one environment instance on the server).

    Args:
        base_url: ``http://host:port`` of the server.
        timeout_s: seconds allowed for connecting and for each answer.

    Raises:
        WireError: cannot connect (the message names the URL and cause).
    """

    def __init__(self, base_url: str, *, timeout_s: float = 10.0):
        self.url = ws_url(normalise_url(base_url))
        self.timeout_s = timeout_s
        # `__enter__` marks the connection as managed (websockets >= 17.1 warns otherwise);
        # `close()` ends it.
        try:
            self._ws = connect(
                self.url,
                open_timeout=timeout_s,
                close_timeout=2,
                max_size=MAX_FRAME_BYTES,
                proxy=None,
            ).__enter__()
        except TypeError:  # websockets < 15 has no proxy argument
            self._ws = connect(
                self.url, open_timeout=timeout_s, close_timeout=2, max_size=MAX_FRAME_BYTES
            ).__enter__()
        except Exception as exc:  # noqa: BLE001 - every connect failure becomes one message
            raise WireError(
                f"Cannot open a WebSocket session at {self.url}: {exc}.",
                hint="Check the server is running and the URL is right.",
            ) from None
        self.closed = False
        self.timed_out = False  # an answer did not come in time: close() does not wait
        self.last_frame_bytes = 0  # characters of the last frame received

    # -- raw frames -------------------------------------------------------------------------
    def send_raw(self, text: str) -> None:
        """Send a text frame as is (used to probe malformed input)."""
        try:
            self._ws.send(text)
        except Exception as exc:  # noqa: BLE001
            raise WireError(f"The session at {self.url} is closed: {exc}.") from None

    def recv(self, timeout_s: float | None = None) -> dict[str, Any]:
        """Receive one frame as a dict.

        Raises:
            WireTimeout: no frame within the timeout.
            WireError: the socket closed, or the frame is not a JSON object.
        """
        t = self.timeout_s if timeout_s is None else timeout_s
        try:
            text = self._ws.recv(timeout=t)
        except TimeoutError:
            self.timed_out = True
            raise WireTimeout(f"No answer from {self.url} within {t:g} s.") from None
        except Exception as exc:  # noqa: BLE001
            self.closed = True
            raise WireError(f"The session at {self.url} closed: {exc}.") from None
        self.last_frame_bytes = len(text)
        try:
            frame = json.loads(text)
        except (TypeError, ValueError):
            raise WireError(
                f"The server sent a frame that is not JSON: {str(text)[:200]!r}."
            ) from None
        if not isinstance(frame, dict):
            raise WireError(f"The server sent a frame that is not a JSON object: {frame!r:.200}.")
        return frame

    def request(self, frame: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """Send a frame and return the answer frame (error frames included, not raised)."""
        self.send_raw(json.dumps(frame, allow_nan=False))
        return self.recv(timeout_s)

    # -- typed calls ------------------------------------------------------------------------
    def _observation(self, frame: dict[str, Any], latency: float) -> StepResult:
        if frame.get("type") == "error":
            raise EnvErrorFrame(frame.get("data") or {})
        if frame.get("type") != "observation":
            raise WireError(f"Expected an `observation` frame, got {frame.get('type')!r}.")
        data = frame.get("data") or {}
        reward = data.get("reward")
        if isinstance(reward, bool) or not isinstance(reward, (int, float)):
            reward = None if reward is None else reward
        return StepResult(
            observation=dict(data.get("observation") or {}),
            reward=reward,
            done=bool(data.get("done", False)),
            latency_s=latency,
            raw=data,
            frame_bytes=self.last_frame_bytes,
        )

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: object
    ) -> StepResult:
        """Reset the episode. Keys with ``None`` values are not sent.

        Raises:
            EnvErrorFrame: the server answered with an error frame.
            WireError: transport failure or timeout.
        """
        data = {"seed": seed, "episode_id": episode_id, **kwargs}
        data = {k: v for k, v in data.items() if v is not None}
        t0 = time.perf_counter()
        frame = self.request({"type": "reset", "data": data})
        return self._observation(frame, time.perf_counter() - t0)

    def step(self, action: dict[str, Any], timeout_s: float | None = None) -> StepResult:
        """Take one step with ``action`` (the action fields, no wrapper).

        Raises:
            EnvErrorFrame: the server answered with an error frame.
            WireError: transport failure or timeout.
        """
        t0 = time.perf_counter()
        frame = self.request({"type": "step", "data": action}, timeout_s)
        return self._observation(frame, time.perf_counter() - t0)

    def state(self) -> dict[str, Any]:
        """The environment's state (``episode_id``, ``step_count`` and subclass fields)."""
        frame = self.request({"type": "state"})
        if frame.get("type") == "error":
            raise EnvErrorFrame(frame.get("data") or {})
        return dict(frame.get("data") or {})

    def close(self) -> None:
        """Send ``{"type":"close"}`` and let the server close (no traceback in its log)."""
        if self.closed:
            return
        self.closed = True
        if self.timed_out:
            # The server is stuck in this session (its handler will not read a close frame):
            # drop the connection at once instead of waiting for two close timeouts.
            try:
                self._ws.close_socket()
            except Exception:  # noqa: BLE001
                pass
            return
        try:
            self._ws.send(json.dumps({"type": "close"}))
            # Let the server close first: closing our end at once makes openenv-core 0.3.0 log
            # an "Exception in ASGI application" traceback (PROTOCOL.md).
            self._ws.recv(timeout=2)
        except Exception:  # noqa: BLE001 - ConnectionClosed is the expected outcome
            pass
        try:
            self._ws.close()
        except Exception:  # noqa: BLE001
            pass

    def __enter__(self) -> EnvSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """True for an int/float that is neither NaN nor infinite (bools excluded)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


# -- health ---------------------------------------------------------------------------------
HEALTHY = "healthy"


@dataclass
class Health:
    """One ``GET /health`` answer.

    Attributes:
        status_code: the HTTP status, or ``None`` when no answer came.
        body: the JSON body, or ``None`` when it is not JSON (or no answer came).
        text: the first 200 characters of the body, or why no answer came.
    """

    status_code: int | None
    body: Any
    text: str

    @property
    def healthy(self) -> bool:
        """The one definition of healthy: HTTP 200 with a JSON object whose ``status`` is
        ``"healthy"`` (OpenEnv's ``create_app`` answers ``{"status": "healthy"}``; an
        object without ``status`` is accepted)."""
        return (
            self.status_code == 200
            and isinstance(self.body, dict)
            and self.body.get("status", HEALTHY) == HEALTHY
        )

    def describe(self) -> str:
        """``"503 {'status': 'starting'}"`` or ``"no answer: ConnectError ..."``."""
        if self.status_code is None:
            return self.text
        shown = json.dumps(self.body)[:200] if self.body is not None else repr(self.text)
        return f"{self.status_code} {shown}"


def get_health(url: str, *, client: httpx.Client | None = None, timeout_s: float = 2.0) -> Health:
    """``GET {url}/health`` once. Never raises.

    Args:
        url: base URL (``http://host:port``).
        client: an ``httpx.Client`` to reuse, else a one-off request.
        timeout_s: seconds for the request (ignored with ``client``).
    """
    target = normalise_url(url) + "/health"
    try:
        r = (
            client.get(target)
            if client is not None
            else httpx.get(target, timeout=timeout_s, verify=tls())
        )
    except httpx.TimeoutException:
        return Health(None, None, f"no answer within {timeout_s:g} s")
    except httpx.HTTPError as exc:
        return Health(None, None, f"no answer: {type(exc).__name__}: {exc}")
    try:
        body = r.json()
    except ValueError:
        body = None
    return Health(r.status_code, body, r.text[:200])


def wait_healthy(
    url: str,
    *,
    timeout_s: float,
    interval_s: float = 0.1,
    alive: Callable[[], bool] | None = None,
    on_exit: Callable[[], None] | None = None,
) -> float:
    """Poll ``GET /health`` until :attr:`Health.healthy`.

    Args:
        url: base URL.
        timeout_s: seconds to wait in total (a start-up timeout).
        interval_s: seconds between polls.
        alive: returns False when the process serving ``url`` has exited.
        on_exit: called (and expected to raise) when ``alive()`` turns False.

    Returns:
        Seconds it took.

    Raises:
        TimeoutError: not healthy within ``timeout_s``; the message is the last answer.
    """
    start = time.monotonic()
    deadline = start + timeout_s
    last = Health(None, None, "no answer yet")
    with httpx.Client(timeout=2.0, trust_env=False, verify=tls()) as client:
        while True:
            if alive is not None and not alive():
                if on_exit is not None:
                    on_exit()
                raise TimeoutError("the process exited")
            last = get_health(url, client=client, timeout_s=2.0)
            if last.healthy:
                return time.monotonic() - start
            if time.monotonic() >= deadline:
                raise TimeoutError(f"last answer: {last.describe()}")
            time.sleep(interval_s)


# -- sessions and capacity ------------------------------------------------------------------
CAPACITY_REACHED = "CAPACITY_REACHED"
SESSION_CLOSED = "SESSION_CLOSED"
CONNECT_FAILED = "CONNECT_FAILED"


@dataclass
class Refusal:
    """Why the server did not accept a new session.

    Attributes:
        code: the error frame's ``code`` (``CAPACITY_REACHED``, ...), ``SESSION_CLOSED``
            (closed without an error frame) or ``CONNECT_FAILED`` (no WebSocket at all).
        data: the error frame's ``data`` (``max_sessions``, ``active_sessions`` for
            CAPACITY_REACHED), or ``{"message": ...}``.
    """

    code: str
    data: dict[str, Any]

    @property
    def message(self) -> str:
        return str(self.data.get("message", "")).strip()

    @property
    def capacity(self) -> int | None:
        """``max_sessions`` of a CAPACITY_REACHED frame, else ``None``."""
        value = self.data.get("max_sessions")
        return value if isinstance(value, int) and not isinstance(value, bool) else None


def probe_frame(session: EnvSession, timeout_s: float | None = None) -> dict[str, Any]:
    """Send ``state`` on a new session and return the answer frame.

    A server at capacity sends its CAPACITY_REACHED frame and closes at once, possibly
    before the probe is sent: that frame is still read from the buffer.

    Raises:
        WireTimeout: no answer in time.
        WireError: the session closed without any frame.
    """
    try:
        session.send_raw(json.dumps({"type": "state"}))
    except WireError:
        return session.recv(0.5)
    return session.recv(timeout_s)


def probe_session(session: EnvSession, timeout_s: float | None = None) -> Refusal | None:
    """``None`` when the new ``session`` is accepted, else the :class:`Refusal`.

    Accepted means the server answered the ``state`` probe with anything but an error frame
    or with ``EXECUTION_ERROR`` (the session exists; the environment's ``state`` failed).

    Raises:
        WireTimeout: no answer within the timeout (a hang is not a refusal).
    """
    try:
        frame = probe_frame(session, timeout_s)
    except WireTimeout:
        raise
    except WireError as exc:
        return Refusal(SESSION_CLOSED, {"message": exc.message})
    if frame.get("type") == "error":
        data = frame.get("data") or {}
        code = str(data.get("code", "UNKNOWN"))
        if code != "EXECUTION_ERROR":
            return Refusal(code, dict(data))
    return None


@dataclass
class SessionPool:
    """What :func:`open_sessions` got.

    Attributes:
        sessions: accepted, open sessions (the caller closes them).
        refusal: why the next one was refused, or ``None`` when every one wanted was accepted.
    """

    sessions: list[EnvSession]
    refusal: Refusal | None

    def close(self) -> None:
        for s in self.sessions:
            s.close()


def open_sessions(
    url: str, want: int, *, timeout_s: float, before_each: Callable[[], None] | None = None
) -> SessionPool:
    """Open up to ``want`` sessions, each probed, stopping at the first refusal.

    Used by ``eval`` (its workers' sessions; a CAPACITY_REACHED refusal caps concurrency)
    and by ``validate`` (capacity: open until refused).

    Args:
        url: base URL.
        want: sessions wanted, >= 1.
        timeout_s: seconds for connecting and for each probe's answer.
        before_each: called before each attempt (e.g. a budget check that raises).

    Raises:
        WireTimeout: a probe got no answer (the server hangs). Sessions opened so far are
            closed first; so are they when ``before_each`` raises.
    """
    sessions: list[EnvSession] = []
    try:
        for _ in range(want):
            if before_each is not None:
                before_each()
            try:
                session = EnvSession(url, timeout_s=timeout_s)
            except WireError as exc:
                return SessionPool(sessions, Refusal(CONNECT_FAILED, {"message": exc.message}))
            try:
                refusal = probe_session(session)
            except BaseException:
                session.close()
                raise
            if refusal is not None:
                session.close()
                return SessionPool(sessions, refusal)
            sessions.append(session)
    except BaseException:
        for s in sessions:
            s.close()
        raise
    return SessionPool(sessions, None)
