"""The environment's oracle as an OpenAI-compatible chat-completions model (``envkit
serve-oracle``), to try the ``openai`` path offline: ``envkit eval --policy openai`` and a
generated ``inference.py`` then play episodes without a model, a key or a network.

How a request becomes an action. The oracle (``envkit.oracle`` in the manifest) maps an
observation dict to an action dict, as ``envkit eval --policy oracle`` and ``envkit validate``
call it. So the server replays the observation the conversation shows: the last ```json block
holding a JSON object in the last user message (``envkit eval``'s user messages and the
generated ``inference.py``'s both end with one), and answers the oracle's action for it. It
keeps no state per conversation on purpose: keying an oracle by the first message would mix
up two episodes with the same seed (their first messages are equal) and concurrent clients,
and a retried request would advance a stateful oracle twice. Replaying is idempotent, needs
no session, and gives the same actions as ``--policy oracle`` whatever the seed.

The reply is the action as a ```json block: the first thing ``envkit eval``'s reply parser
(:mod:`envkit.evaluation.parsing`) reads, and what the generated ``inference.py`` accepts.

The server is the standard library's :class:`http.server.ThreadingHTTPServer` (fastapi and
uvicorn are only in envkit's ``label`` extra, and a few JSON routes need neither). The oracle
runs in the environment's interpreter (:class:`envkit.policy.PolicyProcess`); its calls are
serialised by a lock, since that child answers one line at a time.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from envkit.envdir import EnvDir
from envkit.envdir.constants import MANIFEST_NAME
from envkit.envdir.project import resolve_python, resolve_timeouts
from envkit.errors import InternalError, PolicyError, UsageError
from envkit.evaluation.policies import EnvCallablePolicy

MODEL_ID = "oracle"
"""The one model id the server answers to (others get OpenAI's 404 ``model_not_found``)."""

DEFAULT_PORT = 8011
"""``envkit serve-oracle``'s default port (``envkit run`` serves the environment on 8000)."""

MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body accepted, bytes (a long episode's conversation fits many times)."""

_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


class NoObservation(ValueError):
    """The conversation shows no observation to replay; the message says what was expected."""


def _text(content: object) -> str:
    """A message's text: a string, or the ``text`` parts of OpenAI's content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def observation_from(messages: Sequence[object] | None) -> dict[str, Any]:
    """The observation the conversation shows last.

    Args:
        messages: the request's ``messages`` (a list of ``{"role", "content"}`` dicts).

    Returns:
        The JSON object of the last ```json block in the last user message that holds one.

    Raises:
        NoObservation: no user message, or none of its fenced blocks is a JSON object.
    """
    users = [m for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        raise NoObservation("the conversation has no user message")
    for block in reversed(_FENCE.findall(_text(users[-1].get("content")))):
        try:
            value = json.loads(block)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise NoObservation(
        "the last user message shows no observation as a ```json block (the oracle model "
        "replays the observation it is shown; envkit eval and the generated inference.py "
        "send one)"
    )


def completion(model: str, reply: str, messages: list[Any]) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` object answering ``reply``, with a rough token count
    (4 characters a token) so clients that record usage see numbers."""
    prompt_tokens = sum(len(_text(m.get("content"))) for m in messages if isinstance(m, dict))
    prompt_tokens //= 4
    completion_tokens = max(1, len(reply) // 4)
    return {
        "id": f"chatcmpl-oracle-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": reply},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class OracleModel:
    """The environment's oracle, one action at a time (thread-safe).

    Args:
        spec: the oracle's ``module:callable``.
        root: the environment directory (the child's working directory and ``sys.path``).
        python: the environment's interpreter.
        load_timeout_s: seconds to import the oracle's module.
        call_timeout_s: seconds for one action.

    Raises:
        PolicyError: the oracle cannot be loaded (in time).
    """

    def __init__(
        self,
        spec: str,
        root: Path,
        python: str,
        *,
        load_timeout_s: float = 60.0,
        call_timeout_s: float = 30.0,
    ):
        self.spec = spec
        self._lock = threading.Lock()
        self._policy = EnvCallablePolicy(
            spec, root, python, load_timeout_s=load_timeout_s, call_timeout_s=call_timeout_s
        )

    def action(self, observation: dict[str, Any]) -> dict[str, Any]:
        """The oracle's action for ``observation``.

        Raises:
            PolicyError: the oracle raised, timed out or returned a non-dict.
        """
        with self._lock:
            self._policy.begin(0, 0)  # starts the child again if the last call killed it
            decision = self._policy.act(observation, reward=None, step=0, last_error=None)
        return dict(decision.action or {})

    def reply(self, messages: list[Any]) -> str:
        """The assistant's answer to a conversation: the action as a ```json block.

        Raises:
            NoObservation: the conversation shows no observation.
            PolicyError: the oracle failed.
        """
        action = self.action(observation_from(messages))
        return f"```json\n{json.dumps(action, ensure_ascii=False)}\n```"

    def close(self) -> None:
        """Stop the oracle's process. Idempotent."""
        self._policy.close()


def _error_body(message: str, kind: str, code: str) -> dict[str, Any]:
    """OpenAI's error object (what the ``openai`` client turns into its exceptions)."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    """Routes: ``POST /v1/chat/completions``, ``GET /v1/models``, ``GET /health``."""

    server: OracleHTTPServer
    protocol_version = "HTTP/1.1"  # keep-alive: the openai client reuses its connections

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per request would drown the command's own output

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "envkit"}
            self._send(200, {"object": "list", "data": [model]})
        elif path == "/health":
            self._send(200, {"status": "healthy", "oracle": self.server.oracle.spec})
        else:
            self._send(404, _error_body(f"No route {path}.", "invalid_request_error", "not_found"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, _error_body(f"No route {path}.", "invalid_request_error", "not_found"))
            return
        status, body = self._answer(self._read_json())
        self._send(status, body)

    def _read_json(self) -> object:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # the unread body cannot be skipped safely
            return None
        try:
            return json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            return None

    def _answer(self, body: object) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) for a chat-completions request body."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return 400, _error_body(
                "Expected a JSON object with `messages`.", "invalid_request_error", "invalid_body"
            )
        model = str(body.get("model", ""))
        if model != MODEL_ID:
            return 404, _error_body(
                f"The model `{model}` does not exist; this server serves `{MODEL_ID}`.",
                "invalid_request_error",
                "model_not_found",
            )
        if body.get("stream"):
            return 400, _error_body(
                "Streaming is not supported by the oracle model.",
                "invalid_request_error",
                "stream_unsupported",
            )
        try:
            reply = self.server.oracle.reply(body["messages"])
        except NoObservation as exc:
            return 400, _error_body(f"{exc}.", "invalid_request_error", "no_observation")
        except PolicyError as exc:
            return 500, _error_body(str(exc), "server_error", "oracle_failed")
        return 200, completion(model, reply, body["messages"])


class OracleHTTPServer(ThreadingHTTPServer):
    """A :class:`ThreadingHTTPServer` serving ``oracle`` (daemon threads: a hung client
    never keeps the process alive).

    Args:
        oracle: the model to serve (``None``: set :attr:`oracle` before serving).
        host: bind address (``127.0.0.1``: only this machine).
        port: TCP port; 0 picks a free one (read :attr:`port`).
    """

    daemon_threads = True

    def __init__(
        self, oracle: OracleModel | None, host: str = "127.0.0.1", port: int = DEFAULT_PORT
    ):
        self._oracle = oracle
        super().__init__((host, port), _Handler)

    @property
    def oracle(self) -> OracleModel:
        """The model served (set after binding, so a taken port fails before the load)."""
        if self._oracle is None:
            raise InternalError("The oracle server was started without an oracle.")
        return self._oracle

    @oracle.setter
    def oracle(self, value: OracleModel) -> None:
        self._oracle = value

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (ends with ``/v1``), e.g. ``http://127.0.0.1:8011/v1``."""
        host = str(self.server_address[0])
        if host in ("0.0.0.0", "::", ""):  # every interface: this machine reaches it on loopback
            host = "127.0.0.1"
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}/v1"


def open_oracle_server(
    root: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    python: str | None = None,
    startup_timeout_s: float | None = None,
    reply_timeout_s: float | None = None,
) -> OracleHTTPServer:
    """Bind ``host:port`` and load the oracle of the environment at ``root``; serve it with
    ``serve_forever()`` and release it with ``server_close()`` then ``oracle.close()``.

    Args:
        root: the environment directory (its manifest names the oracle).
        host: bind address; port: TCP port (0: a free one).
        python: the environment's interpreter (default: ``root/.venv/bin/python`` if it
            exists, else envkit's, as :func:`envkit.envdir.project.resolve_python` picks).
        startup_timeout_s: seconds to load the oracle (default: the manifest's
            ``startup_timeout_s``); reply_timeout_s: seconds for one action (default: twice
            its ``step_timeout_s``, as ``envkit eval`` waits).

    Raises:
        SpecError: the manifest is missing or invalid.
        UsageError: the manifest names no oracle, or ``host:port`` cannot be bound.
        PolicyError: the oracle cannot be loaded (in time).
    """
    env = EnvDir(root)
    env.require_manifest()
    spec = env.spec
    if not spec.oracle:
        raise UsageError(
            f"{env.manifest_path} names no oracle, so there is nothing to serve.",
            hint=f"Add `oracle: server.oracle:policy` under `envkit:` in {MANIFEST_NAME}.",
        )
    limits = resolve_timeouts(
        spec, startup_timeout_s=startup_timeout_s, reply_timeout_s=reply_timeout_s
    )
    interpreter = resolve_python(env.root, python)
    try:
        server = OracleHTTPServer(None, host, port)
    except OSError as exc:
        raise UsageError.cannot_listen(host, port, exc) from None
    try:
        server.oracle = OracleModel(
            str(spec.oracle),
            env.root,
            interpreter,
            load_timeout_s=limits.startup_s,
            call_timeout_s=limits.reply_s,
        )
    except BaseException:
        server.server_close()
        raise
    return server
