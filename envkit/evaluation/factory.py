"""The policy factory of an evaluation run: the policy named by ``--policy`` is checked before
anything starts (:func:`plan_policy`), then :class:`PolicyFactory` builds one
:class:`envkit.evaluation.policies.EpisodePolicy` per worker.

Policies: ``openai`` (any OpenAI-compatible endpoint), ``random`` (seeded draws from the action
schema), ``oracle`` (the manifest's ``envkit.oracle``) and ``module:callable`` (both run in the
environment's interpreter, out of process).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.envdir import EnvProject
from envkit.envdir.constants import MANIFEST_NAME
from envkit.envdir.manifest import APP_PATTERN
from envkit.errors import InternalError, UsageError
from envkit.evaluation.options import DEFAULT_BASE_URL, EvalOptions, Notes
from envkit.evaluation.policies import (
    ActionsPolicy,
    ChatSettings,
    EnvCallablePolicy,
    EpisodePolicy,
    OpenAIPolicy,
    RandomPolicy,
    model_error,
    parse_actions,
)
from envkit.evaluation.prompts import system_prompt as derive_prompt
from envkit.evaluation.records import EvalSettings

if TYPE_CHECKING:
    import openai

    from envkit.envdir.manifest import EnvSpec

ACTIONS_PREFIX = "actions:"  # --policy actions:JSON (a fixed list of actions, replayed)
OPENAI_TIMEOUT_S = 120.0  # seconds the openai client waits for one completion
# The endpoint probe before the server starts: a refused or unresolvable endpoint fails at
# once; a host that drops packets fails after PROBE_CONNECT_S; a slow answer is not a failure.
PROBE_CONNECT_S = 5.0  # seconds to open the connection
PROBE_TIMEOUT_S = 10.0  # seconds for the whole probe request
PROBE_MAX_RETRIES = 1  # at most; more would spend the seconds the probe is there to save
NO_MODEL_HINT = (
    "No model? try `--policy oracle` or `--policy random`. "
    "With one: pass --model (e.g. --model Qwen/Qwen3-4B) or set $MODEL_NAME."
)


@dataclass(frozen=True)
class PolicyPlan:
    """The policy of a run, resolved and checked before the server starts.

    Attributes:
        name: ``--policy`` as given (``openai``, ``random``, ``oracle``, ``module:callable``).
        model: the model id (``openai`` only, else ``None``).
        base_url: the endpoint, without a trailing ``/`` (``openai`` only).
        key: the API key, or ``None`` (``openai`` only; never printed or written).
        key_env: the environment variable ``key`` came from (``openai`` only).
        callable_spec: the ``module:callable`` to run in the environment's interpreter (the
            manifest's oracle for ``oracle``), or ``None`` for ``openai`` and ``random``.
        actions: the fixed actions of ``actions:JSON`` (``()`` for other policies).
    """

    name: str
    model: str | None = None
    base_url: str | None = None
    key: str | None = field(default=None, repr=False)
    key_env: str | None = None
    callable_spec: str | None = None
    actions: tuple[dict[str, Any], ...] = ()


def plan_policy(
    options: EvalOptions, project: EnvProject | None, spec: EnvSpec, notes: Notes
) -> PolicyPlan:
    """Check ``options.policy`` against the options, the environment and the process
    environment.

    Args:
        options: the run's options (``policy``, ``model``, ``base_url``, ``api_key_env``).
        project: the :class:`envkit.envdir.EnvProject`, or ``None`` (``--url`` without PATH).
        spec: the manifest's :class:`envkit.envdir.manifest.EnvSpec` (its ``oracle``).
        notes: gets a note when ``openai`` runs without an API key.

    Returns:
        The plan.

    Raises:
        UsageError: unknown policy; ``openai`` without a model or with an unset
            ``api_key_env``; ``oracle`` without PATH or without an oracle in the manifest;
            a ``module:callable`` that is not one.
    """
    policy = options.policy
    if policy == "openai":
        return _plan_openai(options, notes)
    if policy == "random":
        return PolicyPlan(name=policy)
    if policy.startswith(ACTIONS_PREFIX):
        return PolicyPlan(name=policy, actions=tuple(parse_actions(policy[len(ACTIONS_PREFIX) :])))
    if policy == "oracle" or ":" in policy:
        return PolicyPlan(name=policy, callable_spec=_callable_spec(policy, project, spec))
    raise UsageError(
        f"--policy {policy}: unknown policy.",
        hint="Use openai, random, oracle, module:callable or actions:JSON.",
    )


def require_model(options: EvalOptions) -> str:
    """The model of ``--policy openai``: ``options.model``, else ``$MODEL_NAME``.

    Checked before the environment is even read, so that a newcomer who ran a bare
    ``envkit eval`` learns about the policies that need no model first.

    Raises:
        UsageError: neither is set (the hint names ``--policy oracle`` and ``--policy random``).
    """
    model = options.model or os.environ.get("MODEL_NAME") or None
    if not model:
        raise UsageError(
            "--policy openai (the default) needs a model: no --model given and $MODEL_NAME is unset.",
            hint=NO_MODEL_HINT,
        )
    return model


def _plan_openai(options: EvalOptions, notes: Notes) -> PolicyPlan:
    model = require_model(options)
    base_url = (options.base_url or os.environ.get("API_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    key, key_env = resolve_key(options.api_key_env)
    if key is None:
        notes.add(
            "No API key: $HF_TOKEN and $OPENAI_API_KEY are unset, so requests are sent "
            "without one (fine for a local server)."
        )
    return PolicyPlan(name="openai", model=model, base_url=base_url, key=key, key_env=key_env)


def probe_endpoint(plan: PolicyPlan, *, max_retries: int) -> None:
    """Check that the ``openai`` plan's endpoint can be reached, before any server starts
    (starting one can take a minute; a wrong ``--base-url`` then fails on the first call).

    Sends ``GET {base_url}/models`` (part of the OpenAI API). Any HTTP answer, even an error
    status (many servers have no ``/models``, some want a key for it), counts as reachable:
    the first completion reports those problems with the model's name. So does a slow answer.

    Args:
        plan: an ``openai`` plan (its ``base_url``, ``key``, ``model``, ``key_env``).
        max_retries: ``--max-retries``; the probe retries at most :data:`PROBE_MAX_RETRIES`.

    Raises:
        ModelEndpointError: no connection could be opened within :data:`PROBE_CONNECT_S`
            seconds (refused, unknown host, no route), with the message
            :func:`envkit.evaluation.policies.model_error` gives any unreachable endpoint.
    """
    import httpx
    import openai

    retries = min(max_retries, PROBE_MAX_RETRIES)
    client = openai.OpenAI(
        base_url=plan.base_url,
        api_key=plan.key or "no-key-set",
        max_retries=retries,
        timeout=httpx.Timeout(PROBE_TIMEOUT_S, connect=PROBE_CONNECT_S),
    )
    try:
        client.models.list()
    except openai.APIConnectionError as exc:  # APITimeoutError is one too
        cause = exc.__cause__
        if isinstance(exc, openai.APITimeoutError) and not isinstance(cause, httpx.ConnectTimeout):
            return  # connected, but the answer is slow: reachable
        unreachable = openai.APIConnectionError(request=exc.request)
        unreachable.__cause__ = cause
        raise model_error(
            unreachable,
            base_url=plan.base_url or "",
            model=plan.model or "",
            key_env=plan.key_env,
            max_retries=retries,
        ) from None
    except openai.OpenAIError:
        return  # it answered
    finally:
        client.close()


def _callable_spec(policy: str, project: EnvProject | None, spec: EnvSpec) -> str:
    """The ``module:callable`` that ``oracle`` or ``module:callable`` names."""
    if policy != "oracle":
        if not APP_PATTERN.fullmatch(policy):
            raise UsageError(
                f"--policy {policy}: expected module.path:callable.",
                hint="E.g. --policy agents.greedy:policy.",
            )
        return policy
    if project is None:
        raise UsageError(
            "--policy oracle needs the environment directory (its openenv.yaml names the oracle).",
            hint="Pass PATH together with --url.",
        )
    if not spec.oracle:
        raise UsageError(
            f"{project.root / MANIFEST_NAME} has no oracle.",
            hint="Add `oracle: server.oracle:policy` to openenv.yaml or "
            "pass --policy module:callable.",
        )
    return str(spec.oracle)


def resolve_key(api_key_env: str | None) -> tuple[str | None, str | None]:
    """The API key and the name of the variable it came from: ``$api_key_env`` when named,
    else ``$HF_TOKEN``, then ``$OPENAI_API_KEY``; ``(None, None)`` when none is set.

    Raises:
        UsageError: ``api_key_env`` names a variable that is unset or empty.
    """
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


class PolicyFactory:
    """Builds the policy of each worker; owns what the workers' policies share (the
    ``openai`` client), which :meth:`close` releases.

    Build it with :meth:`create`.

    Attributes:
        prompt: the system prompt the ``openai`` policy sends, else ``None``.
    """

    def __init__(
        self,
        settings: EvalSettings,
        plan: PolicyPlan,
        action_schema: dict[str, Any],
        root: Path,
        *,
        client: openai.OpenAI | None = None,
        prompt: str | None = None,
    ):
        if plan.callable_spec is not None and settings.python is None:
            raise InternalError(
                f"--policy {plan.name}: no interpreter was resolved for the environment's code."
            )
        self.settings = settings
        self.plan = plan
        self.action_schema = action_schema
        self.root = root
        self.client = client
        self.prompt = prompt

    @classmethod
    def create(
        cls,
        settings: EvalSettings,
        plan: PolicyPlan,
        schemas: dict[str, Any],
        metadata: dict[str, Any],
        root: Path,
    ) -> PolicyFactory:
        """The factory for ``plan``.

        Args:
            settings: the run's settings.
            plan: the checked policy.
            schemas: ``GET /schema``'s answer; its ``action`` must be a JSON Schema object.
            metadata: ``GET /metadata``'s answer (``{}`` when unavailable); with ``schemas``
                it makes the ``openai`` system prompt unless ``settings.system_prompt`` is set.
            root: the directory ``module:callable`` policies run in.
        """
        action_schema = schemas["action"]
        if plan.name != "openai":
            return cls(settings, plan, action_schema, root)
        prompt = (
            settings.system_prompt
            if settings.system_prompt is not None
            else derive_prompt(schemas, metadata)
        )
        import openai

        client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=plan.key or "no-key-set",
            max_retries=settings.max_retries,
            timeout=OPENAI_TIMEOUT_S,
        )
        return cls(settings, plan, action_schema, root, client=client, prompt=prompt)

    def make(self) -> EpisodePolicy:
        """A new policy for one worker (a ``module:callable`` one starts its process).

        Raises:
            PolicyError: the ``module:callable`` cannot be loaded.
        """
        settings = self.settings
        if self.plan.name == "openai":
            chat = ChatSettings(
                model=settings.model or "",
                system_prompt=self.prompt or "",
                action_schema=self.action_schema,
                temperature=settings.temperature,
                max_tokens=settings.max_tokens,
                base_url=settings.base_url or "",
                key_env=settings.api_key_env,
                max_retries=settings.max_retries,
            )
            return OpenAIPolicy(self.client, chat)
        if self.plan.name == "random":
            return RandomPolicy(self.action_schema, settings.seed)
        if self.plan.actions:
            return ActionsPolicy(list(self.plan.actions))
        return EnvCallablePolicy(
            self.plan.callable_spec or "",
            self.root,
            settings.python or "",
            load_timeout_s=settings.timeouts.startup_s,
            call_timeout_s=settings.timeouts.reply_s,
        )

    def close(self) -> None:
        """Release the shared ``openai`` client, if any."""
        if self.client is not None:
            self.client.close()
