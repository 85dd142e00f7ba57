"""Talking to an environment over the wire: HTTP endpoints and WebSocket sessions.

envkit never imports the environment's code: everything goes through the OpenEnv contract
(docs/protocol.md). Every call has a timeout; a server that hangs or floods produces a
:class:`~envkit.errors.WireError`, never a hung caller.

Frames (client -> server): ``{"type":"reset","data":{...}}``, ``{"type":"step","data":{action}}``,
``{"type":"state"}``, ``{"type":"close"}``. Server -> client: ``observation``, ``state``,
``error`` frames.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from envkit.errors import WireError

MAX_FRAME_BYTES = 16 * 1024 * 1024  # a flooding server is cut off here


def ws_url(base_url: str) -> str:
    """``http://h:p`` -> ``ws://h:p/ws`` (``https`` -> ``wss``)."""
    base = base_url.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base[len("https://"):] + "/ws"
    if base.startswith("http://"):
        return "ws://" + base[len("http://"):] + "/ws"
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
        observation: the observation fields (without reward/done, which openenv-core moves
            to the top level).
        reward: the reward, or ``None`` (openenv-core sends NaN/inf as ``null``).
        done: whether the episode ended.
        latency_s: seconds between sending the frame and receiving the answer.
        raw: the whole frame ``data``.
    """

    observation: dict[str, Any]
    reward: float | None
    done: bool
    latency_s: float = 0.0
    raw: dict[str, Any] = field(default_factory=dict)


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
        from websockets.sync.client import connect

        self.url = ws_url(normalise_url(base_url))
        self.timeout_s = timeout_s
        # `__enter__` marks the connection as managed (websockets >= 17.1 warns otherwise);
        # `close()` ends it.
        try:
            self._ws = connect(self.url, open_timeout=timeout_s, close_timeout=2,
                               max_size=MAX_FRAME_BYTES, proxy=None).__enter__()
        except TypeError:  # websockets < 15 has no proxy argument
            self._ws = connect(self.url, open_timeout=timeout_s, close_timeout=2,
                               max_size=MAX_FRAME_BYTES).__enter__()
        except Exception as exc:  # noqa: BLE001 - every connect failure becomes one message
            raise WireError(f"Cannot open a WebSocket session at {self.url}: {exc}.",
                            hint="Check the server is running and the URL is right.") from None
        self.closed = False

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
            raise WireTimeout(f"No answer from {self.url} within {t:g} s.") from None
        except Exception as exc:  # noqa: BLE001
            self.closed = True
            raise WireError(f"The session at {self.url} closed: {exc}.") from None
        try:
            frame = json.loads(text)
        except (TypeError, ValueError):
            raise WireError(f"The server sent a frame that is not JSON: {str(text)[:200]!r}.")
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
        return StepResult(observation=dict(data.get("observation") or {}),
                          reward=reward, done=bool(data.get("done", False)),
                          latency_s=latency, raw=data)

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              **kwargs: Any) -> StepResult:
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


def is_finite_number(value: Any) -> bool:
    """True for an int/float that is neither NaN nor infinite (bools excluded)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(float(value)))
