"""Policies for ``envkit eval``: ``random`` (seeded draws from the action JSON Schema),
``oracle`` / ``module:callable`` (the environment's own code, out of process), and ``openai``
(any OpenAI-compatible chat-completions endpoint).

A policy instance (an :class:`EpisodePolicy`) serves one worker (one WebSocket session) at a
time; :class:`envkit.evaluation.factory.PolicyFactory` creates one per worker.
"""

from __future__ import annotations

import json
import random
import string
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from envkit.blind import shapes
from envkit.envdir.project import no_answer
from envkit.errors import ModelEndpointError, PolicyError, UsageError
from envkit.evaluation.parsing import ActionParseError, parse_action
from envkit.evaluation.prompts import observation_message
from envkit.policy import PolicyProcess

if TYPE_CHECKING:
    import openai


@dataclass
class Decision:
    """What a policy chose for one observation.

    Attributes:
        action: the action fields, or ``None`` when the reply could not be parsed.
        error: why there is no action (a parse failure), else ``None``.
        reply: the model's raw reply text (``openai`` policy only).
        usage: token usage reported by the endpoint (``prompt_tokens``, ``completion_tokens``,
            ``total_tokens``), when reported.
    """

    action: dict[str, Any] | None
    error: str | None = None
    reply: str | None = None
    usage: dict[str, int] | None = None


class EpisodePolicy(Protocol):
    """observation -> action, with per-episode state: what an eval worker plays with.

    Not :data:`envkit.validation.engine.Policy` (a stateless ``(observation, step) -> action``
    callable of the validator's explorer).
    """

    def begin(self, episode: int, seed: int) -> None:
        """A new episode starts (``episode`` is the run-wide index, ``seed`` the reset seed)."""

    def act(
        self,
        observation: dict[str, Any],
        *,
        reward: float | None,
        step: int,
        last_error: str | None,
    ) -> Decision:
        """The action for ``observation``. Raises on fatal problems only."""

    def close(self) -> None:
        """Release processes and connections."""


# -- random ----------------------------------------------------------------------------------

_ALPHABET = string.ascii_lowercase + "     "


class SchemaSampler:
    """Seeded random values that satisfy common JSON Schema keywords.

    Covers what pydantic models produce: ``type`` (string, integer, number, boolean, array,
    object, null), ``enum``, ``const``, ``anyOf``/``oneOf``/``allOf`` (first member for
    ``allOf``), ``$ref`` into ``$defs``/``definitions``, length and range bounds, ``default``.
    ``pattern`` and ``format`` are not honoured (such actions may be rejected by the server
    with VALIDATION_ERROR, which the runner records). hypothesis-jsonschema (a dependency)
    covers more, but offers no public way to draw a reproducible example from a seed.
    """

    def __init__(self, root: dict[str, Any], rng: random.Random):
        self.root = root
        self.rng = rng

    def _resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        depth = 0
        while "$ref" in schema and depth < 20:
            ref = str(schema["$ref"])
            node: Any = self.root
            for part in ref.lstrip("#/").split("/"):
                node = node.get(part, {}) if isinstance(node, dict) else {}
            schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
            depth += 1
        return schema

    def sample(self, schema: dict[str, Any], depth: int = 0) -> object:
        rng = self.rng
        schema = self._resolve(schema)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if schema.get(key):
                options = [o for o in schema[key] if self._resolve(o).get("type") != "null"]
                return self.sample(rng.choice(options or schema[key]), depth + 1)
        if schema.get("allOf"):
            return self.sample(schema["allOf"][0], depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = rng.choice([k for k in kind if k != "null"] or kind)
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        if kind == "string":
            lo = int(schema.get("minLength", 0))
            hi = int(schema.get("maxLength", lo + 24))
            hi = min(hi, lo + 24)
            n = rng.randint(lo, max(lo, hi))
            return "".join(rng.choice(_ALPHABET) for _ in range(n))
        if kind == "integer":
            lo = int(schema.get("minimum", schema.get("exclusiveMinimum", -11) + 1))
            hi = int(schema.get("maximum", schema.get("exclusiveMaximum", lo + 21) - 1))
            return rng.randint(lo, max(lo, hi))
        if kind == "number":
            lo = float(schema.get("minimum", schema.get("exclusiveMinimum", -10.0)))
            hi = float(schema.get("maximum", schema.get("exclusiveMaximum", lo + 20.0)))
            return rng.uniform(lo, hi)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "null":
            return None
        if kind == "array":
            lo = int(schema.get("minItems", 0))
            hi = min(int(schema.get("maxItems", lo + 4)), lo + 4)
            if depth > 6:
                hi = lo
            items = schema.get("items") or {}
            return [self.sample(items, depth + 1) for _ in range(rng.randint(lo, max(lo, hi)))]
        if kind == "object":
            props = schema.get("properties") or {}
            required = set(schema.get("required") or [])
            out = {}
            for name, sub in props.items():
                if name == "metadata":
                    continue
                if name in required or (depth < 6 and rng.random() < 0.5):
                    out[name] = self.sample(sub, depth + 1)
            return out
        return None


class RandomPolicy:
    """Actions drawn at random from the action JSON Schema; episode ``i`` of a run with base
    seed ``s`` always draws the same actions.

    When the action is a tool call and the observation lists the tools with their input
    schemas, the arguments are drawn from the called tool's own schema
    (:func:`envkit.blind.shapes.refine`), as an agent that reads the tool list would.
    """

    def __init__(self, action_schema: dict[str, Any], base_seed: int):
        self.schema = action_schema
        self.base_seed = base_seed
        self._sampler = SchemaSampler(action_schema, random.Random(0))
        self._calls = shapes.call_shape(action_schema) is not None
        self._refined: dict[str, dict[str, Any]] = {}

    def begin(self, episode: int, seed: int) -> None:
        self._sampler.rng = random.Random(f"envkit-random:{self.base_seed}:{episode}")

    def _schema_for(self, observation: dict[str, Any]) -> dict[str, Any]:
        """The schema to draw from: the tool-call schema refined by the listed tools."""
        if not self._calls:
            return self.schema
        tools = shapes.tools_from_observation(observation)
        if not tools:
            return self.schema
        key = "\0".join(t.name for t in tools)
        if key not in self._refined:
            self._refined[key] = shapes.refine(self.schema, tools) or self.schema
        return self._refined[key]

    def act(
        self,
        observation: dict[str, Any],
        *,
        reward: float | None,
        step: int,
        last_error: str | None,
    ) -> Decision:
        schema = self._schema_for(observation)
        self._sampler.root = schema
        action = self._sampler.sample(schema)
        return Decision(action=action if isinstance(action, dict) else {})

    def close(self) -> None:
        pass


class ActionsPolicy:
    """A fixed list of actions, sent in order in every episode (the last one again once the
    list runs out): ``--policy actions:JSON`` replays what ``envkit validate`` found (EK524,
    EK525 print such a command).

    Args:
        actions: the actions (JSON objects), at least one.
    """

    def __init__(self, actions: list[dict[str, Any]]):
        self.actions = actions

    def begin(self, episode: int, seed: int) -> None:
        pass

    def act(
        self,
        observation: dict[str, Any],
        *,
        reward: float | None,
        step: int,
        last_error: str | None,
    ) -> Decision:
        return Decision(action=dict(self.actions[min(step, len(self.actions) - 1)]))

    def close(self) -> None:
        pass


def parse_actions(text: str) -> list[dict[str, Any]]:
    """The actions of ``--policy actions:TEXT``: a JSON list of objects (or one object), or
    ``@FILE`` holding one.

    Raises:
        UsageError: not JSON, not objects, empty, or the file cannot be read.
    """
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(
                f"--policy actions:{text}: cannot read it ({exc.strerror or exc}).",
                hint="Give a JSON list of actions, or @FILE holding one.",
            ) from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(
            f"--policy actions:...: not JSON ({exc}).",
            hint='Give a JSON list of actions, e.g. actions:\'[{"answer": "42"}]\'.',
        ) from None
    actions = [value] if isinstance(value, dict) else value
    if (
        not isinstance(actions, list)
        or not actions
        or not all(isinstance(a, dict) for a in actions)
    ):
        raise UsageError(
            "--policy actions:...: expected a non-empty JSON list of action objects.",
            hint='e.g. actions:\'[{"answer": "42"}]\'.',
        )
    return actions


# -- the environment's own code --------------------------------------------------------------


class EnvCallablePolicy:
    """An :class:`EpisodePolicy` over a ``module:callable`` of the environment (e.g.
    ``envkit.oracle``); the callable runs in the environment's interpreter, served by an
    :class:`envkit.policy.PolicyProcess` (restarted when it died with the last episode).

    Loading the module is start-up, not a call: importing ``openenv`` alone takes seconds on
    a busy machine, so it gets the start-up timeout and each call the reply timeout.

    Args:
        spec: ``module:callable``.
        root: the environment directory the child process runs in.
        python: the environment's interpreter.
        load_timeout_s: seconds to import the module and find the callable
            (``--startup-timeout``).
        call_timeout_s: seconds for one action (``--reply-timeout``).

    Raises:
        PolicyError: the callable cannot be loaded, or not within ``load_timeout_s``.
    """

    def __init__(
        self,
        spec: str,
        root: Path,
        python: str,
        *,
        load_timeout_s: float = 30.0,
        call_timeout_s: float = 30.0,
    ):
        self.spec, self.root, self.python = spec, root, python
        self.load_timeout_s = load_timeout_s
        self.call_timeout_s = call_timeout_s
        self._proc = self._start()

    def _start(self) -> PolicyProcess:
        """A loaded :class:`envkit.policy.PolicyProcess` whose calls wait ``call_timeout_s``."""
        return PolicyProcess(
            self.spec,
            self.root,
            self.python,
            timeout_s=self.call_timeout_s,
            load_timeout_s=self.load_timeout_s,
        )

    def begin(self, episode: int, seed: int) -> None:
        if not self._proc.alive():  # died with the last episode: start again
            self._proc = self._start()

    def act(
        self,
        observation: dict[str, Any],
        *,
        reward: float | None,
        step: int,
        last_error: str | None,
    ) -> Decision:
        t0 = time.monotonic()
        try:
            return Decision(action=self._proc(observation))
        except PolicyError:
            if time.monotonic() - t0 < self.call_timeout_s:
                raise  # it raised or answered badly, on time: the error names the cause
            raise PolicyError(
                no_answer(f"Policy `{self.spec}`", self.call_timeout_s, policy=True)
            ) from None

    def close(self) -> None:
        self._proc.close()


# -- OpenAI-compatible endpoints -------------------------------------------------------------

_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "maximum context",
    "context window",
    "prompt is too long",
    "too many tokens",
    "input is too long",
)


def model_error(
    exc: BaseException, *, base_url: str, model: str, key_env: str | None, max_retries: int
) -> ModelEndpointError:
    """Translate an ``openai`` exception into a :class:`ModelEndpointError` whose message
    names the endpoint and status and ends with the next step (the API key is never part of
    it)."""
    import openai

    where = f"the model endpoint {base_url}"
    if isinstance(exc, openai.APITimeoutError):
        return ModelEndpointError(
            f"No answer from {where} in time (after {max_retries} retries).",
            hint="Check the endpoint is up, or retry later.",
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return ModelEndpointError(
            f"Cannot reach {where}: {cause}.",
            hint="Check --base-url (or $API_BASE_URL) and that the "
            "server is running; it must end with /v1 for most servers.",
        )
    key_hint = (
        f"Set ${key_env} to a valid key"
        if key_env
        else "Set HF_TOKEN (or OPENAI_API_KEY) to a valid key"
    )
    return _answer_error(
        exc, where="T" + where[1:], model=model, key_hint=key_hint, retries=max_retries
    )


def _answer_error(
    exc: BaseException, *, where: str, model: str, key_hint: str, retries: int
) -> ModelEndpointError:
    """:func:`model_error` for an endpoint that answered (``where`` starts with a capital)."""
    import openai

    status = getattr(exc, "status_code", None)
    body_msg = _body_message(exc)
    if isinstance(exc, openai.AuthenticationError):
        return ModelEndpointError(
            f"{where} rejected the API key (401 Unauthorized).",
            hint=f"{key_hint}, or pass --api-key-env NAME.",
        )
    if isinstance(exc, openai.PermissionDeniedError):
        return ModelEndpointError(
            f"{where} refused access to model `{model}` (403): {body_msg}.",
            hint=f"{key_hint} with access to the model.",
        )
    if isinstance(exc, openai.RateLimitError):
        return ModelEndpointError(
            f"{where} is rate-limiting requests (429) and still was after "
            f"{retries} retries with backoff: {body_msg}.",
            hint="Lower --concurrency, wait, or raise --max-retries.",
        )
    if isinstance(exc, openai.NotFoundError):
        return ModelEndpointError(
            f"{where} answered 404 for model `{model}`: {body_msg}.",
            hint="Check --model and that --base-url ends with /v1.",
        )
    if any(m in body_msg.lower() for m in _CONTEXT_MARKERS):
        return ModelEndpointError(
            f"The conversation is longer than model `{model}`'s context "
            f"window ({status}): {body_msg}.",
            hint="Lower --max-steps, shorten the observation, or use a "
            "model with a longer context.",
        )
    if isinstance(exc, openai.APIStatusError):
        return ModelEndpointError(
            f"{where} answered {status}: {body_msg}.",
            hint="Check --model and the endpoint's documentation; retry later for 5xx errors.",
        )
    return ModelEndpointError(
        f"{where} failed: {type(exc).__name__}: {exc}.",
        hint="Re-run with ENVKIT_DEBUG=1 for details.",
    )


def _body_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    msg = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            msg = inner.get("message") or inner.get("code")
            if inner.get("code") == "context_length_exceeded":
                msg = f"context_length_exceeded: {msg}"
        elif isinstance(inner, str):
            msg = inner
    return str(msg or getattr(exc, "message", None) or exc)[:300]


@dataclass(frozen=True)
class ChatSettings:
    """What an :class:`OpenAIPolicy` sends, the same for every worker of a run.

    Attributes:
        model: model id.
        system_prompt: the system message.
        action_schema: ``/schema``'s action schema (for parsing replies).
        temperature: sampling temperature.
        max_tokens: completion cap, or ``None`` to let the endpoint decide.
        base_url, key_env, max_retries: for error messages only.
    """

    model: str
    system_prompt: str
    action_schema: dict[str, Any]
    temperature: float
    max_tokens: int | None
    base_url: str
    key_env: str | None
    max_retries: int


class OpenAIPolicy:
    """Chat completions over the ``openai`` client: system prompt + one user message per
    observation, the model's replies kept in the conversation for the whole episode.

    Args:
        client: an ``openai.OpenAI`` client (thread-safe; shared by workers).
        chat: the model, prompt and sampling settings.
    """

    def __init__(self, client: openai.OpenAI, chat: ChatSettings):
        self.client = client
        self.model = chat.model
        self.system_prompt = chat.system_prompt
        self.action_schema = chat.action_schema
        self.temperature = chat.temperature
        self.max_tokens = chat.max_tokens
        self._err = {
            "base_url": chat.base_url,
            "model": chat.model,
            "key_env": chat.key_env,
            "max_retries": chat.max_retries,
        }
        self.messages: list[dict[str, str]] = []

    def begin(self, episode: int, seed: int) -> None:
        self.messages = [{"role": "system", "content": self.system_prompt}]

    def act(
        self,
        observation: dict[str, Any],
        *,
        reward: float | None,
        step: int,
        last_error: str | None,
    ) -> Decision:
        import openai

        self.messages.append(
            {
                "role": "user",
                "content": observation_message(
                    observation, reward=reward, step=step, error=last_error
                ),
            }
        )
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages,
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        try:
            completion = self.client.chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise model_error(exc, **self._err) from None
        choices = getattr(completion, "choices", None) or []
        text = (choices[0].message.content or "") if choices else ""
        self.messages.append({"role": "assistant", "content": text})
        usage = None
        if getattr(completion, "usage", None) is not None:
            u = completion.usage
            usage = {
                "prompt_tokens": int(u.prompt_tokens or 0),
                "completion_tokens": int(u.completion_tokens or 0),
                "total_tokens": int(u.total_tokens or 0),
            }
        try:
            action = parse_action(text, self.action_schema)
        except ActionParseError as exc:
            return Decision(action=None, error=str(exc), reply=text, usage=usage)
        return Decision(action=action, reply=text, usage=usage)

    def close(self) -> None:
        pass
