"""The runtime probe plan, ``validation/runtime.json``: what ``openenv validate`` plays.

OpenEnv 0.10's runtime level (manifest schema 2, ``validation.execution.probe_path``) opens
one WebSocket session on the built image and plays this plan: ``reset`` with the plan's
``seed`` and ``episode_id``, ``state``, then ``step`` + ``state`` per action until the
observation says ``done``. Format (plan schema 1, ``openenv.validation.runtime.contracts`` of
openenv 0.10.0; docs/rules.md EK121)::

    {"plan_schema_version": "1",
     "reset": {"episode_id": "envkit-probe", "seed": 0, "options": {}},
     "actions": [{...}, ...]}          # 1-100 action dicts, JSON only, the file <= 64 KiB

:func:`make_probe_plan` records the actions by playing the environment's oracle
(``envkit.oracle``) for one episode against the served environment, so the plan reaches the
end of an episode (or stops at 100 actions). :func:`read_plan` checks a plan as OpenEnv does.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from envkit.envdir.constants import MANIFEST_NAME, PROBE_PLAN_PATH
from envkit.errors import (
    PlanError,  # also importable from here, its old home
    PolicyError,
    WireError,
)
from envkit.findings import Location

# The server, the WebSocket client and the policy process (httpx, websockets: a third of a
# second) are imported by the two functions that play a plan: `envkit init` and the importers
# only write plans (plan_document, dumps), and `envkit init` must start fast.

PLAN_SCHEMA_VERSION = "1"
DEFAULT_EPISODE_ID = "envkit-probe"
MAX_PLAN_BYTES = 65_536
MAX_PLAN_ACTIONS = 100
MAX_SEED = 2**32 - 1
_MAX_DEPTH = 32
_MAX_NODES = 10_000


def plan_document(
    actions: list[dict[str, Any]], *, seed: int = 0, episode_id: str = DEFAULT_EPISODE_ID
) -> dict[str, Any]:
    """A plan dict in OpenEnv's schema 1 (not checked; see :func:`check_plan`)."""
    return {
        "plan_schema_version": PLAN_SCHEMA_VERSION,
        "reset": {"episode_id": episode_id, "seed": seed, "options": {}},
        "actions": list(actions),
    }


def dumps(plan: dict[str, Any]) -> str:
    """The plan as written to disk: one action per line, so diffs stay readable."""
    actions = ",\n".join(
        "    " + json.dumps(a, ensure_ascii=False, allow_nan=False) for a in plan["actions"]
    )
    head = {k: v for k, v in plan.items() if k != "actions"}
    body = json.dumps(head, ensure_ascii=False, allow_nan=False)[:-1]
    return f'{body}, "actions": [\n{actions}\n]}}\n'


def _json_only(value: object, where: str, depth: int = 0, budget: list[int] | None = None) -> None:
    budget = budget if budget is not None else [_MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0 or depth > _MAX_DEPTH:
        raise PlanError(
            f"`{where}` nests deeper than {_MAX_DEPTH} levels or holds more than "
            f"{_MAX_NODES} values."
        )
    if value is None or type(value) in (bool, int, str):
        return
    if type(value) is float:
        if not math.isfinite(value):
            raise PlanError(f"`{where}` must be a finite number; got {value}.")
        return
    if type(value) is dict:
        for key, child in value.items():
            _json_only(child, f"{where}.{key}", depth + 1, budget)
        return
    if type(value) is list:
        for i, child in enumerate(value):
            _json_only(child, f"{where}[{i}]", depth + 1, budget)
        return
    raise PlanError(f"`{where}` must be JSON data; got {type(value).__name__}.")


def check_plan(plan: object) -> None:
    """Check a parsed plan against OpenEnv's plan schema 1 (strict types, as OpenEnv's
    ``RuntimePlan``: no extra keys, ``seed`` an int in 0..2**32-1, ``episode_id`` 1-128
    characters, ``options`` without ``seed``/``episode_id``, 1-100 action objects, finite
    numbers, at most 64 KiB serialised).

    Raises:
        PlanError: the first violation, naming the field.
    """
    if type(plan) is not dict:
        raise PlanError("the plan must be a JSON object.")
    extra = sorted(set(plan) - {"plan_schema_version", "reset", "actions"})
    if extra:
        raise PlanError(f"unknown key `{extra[0]}` (allowed: plan_schema_version, reset, actions).")
    if plan.get("plan_schema_version") != PLAN_SCHEMA_VERSION:
        raise PlanError(
            f'`plan_schema_version` must be the string "1"; got '
            f"{plan.get('plan_schema_version')!r}."
        )
    reset = plan.get("reset")
    if type(reset) is not dict:
        raise PlanError("`reset` must be an object with `episode_id` and `seed`.")
    extra = sorted(set(reset) - {"episode_id", "seed", "options"})
    if extra:
        raise PlanError(f"unknown key `reset.{extra[0]}` (allowed: episode_id, seed, options).")
    eid = reset.get("episode_id")
    if type(eid) is not str or not 1 <= len(eid) <= 128:
        raise PlanError(f"`reset.episode_id` must be a string of 1-128 characters; got {eid!r}.")
    seed = reset.get("seed")
    if type(seed) is not int or not 0 <= seed <= MAX_SEED:
        raise PlanError(f"`reset.seed` must be an integer in 0..{MAX_SEED}; got {seed!r}.")
    options = reset.get("options", {})
    if type(options) is not dict:
        raise PlanError("`reset.options` must be an object.")
    if {"episode_id", "seed"} & set(options):
        raise PlanError("`reset.options` cannot override `episode_id` or `seed`.")
    _json_only(options, "reset.options")
    actions = plan.get("actions")
    if type(actions) is not list or not 1 <= len(actions) <= MAX_PLAN_ACTIONS:
        got = f"{len(actions)} actions" if type(actions) is list else repr(actions)
        raise PlanError(
            f"`actions` must be a list of 1-{MAX_PLAN_ACTIONS} action objects; got {got}."
        )
    for i, action in enumerate(actions):
        if type(action) is not dict:
            raise PlanError(f"`actions[{i}]` must be an object (the step's action fields).")
    _json_only(actions, "actions")
    size = len(json.dumps(plan, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    if size > MAX_PLAN_BYTES:
        raise PlanError(f"the plan must be at most {MAX_PLAN_BYTES} bytes; it is {size}.")


def read_plan(root: Path, probe_path: str = PROBE_PLAN_PATH) -> dict[str, Any]:
    """Read and check the plan at ``root/probe_path`` as ``openenv validate`` would.

    Args:
        root: the environment directory.
        probe_path: package-relative path (``validation.execution.probe_path``).

    Returns:
        The plan dict.

    Raises:
        PlanError: missing, outside ``root``, larger than 64 KiB, not JSON (located), a
            duplicate key, or a schema violation (see :func:`check_plan`).
    """
    base = Path(root).resolve()
    path = (base / probe_path).resolve()
    if not path.is_relative_to(base) or not path.is_file():
        raise PlanError(
            f"`{probe_path}` does not exist inside the environment.",
            hint="Generate it with `envkit migrate` (it plays the oracle).",
        )
    payload = path.read_bytes()[: MAX_PLAN_BYTES + 1]
    if len(payload) > MAX_PLAN_BYTES:
        raise PlanError(
            f"the file must be at most {MAX_PLAN_BYTES} bytes.", location=Location(probe_path)
        )

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise PlanError(
                    f"the key `{key}` appears twice in one object.", location=Location(probe_path)
                )
            out[key] = value
        return out

    try:
        plan = json.loads(payload.decode("utf-8"), object_pairs_hook=unique)
    except UnicodeDecodeError:
        raise PlanError("the file must be UTF-8 text.", location=Location(probe_path)) from None
    except json.JSONDecodeError as exc:
        raise PlanError(
            f"it is not JSON: {exc.msg}.", location=Location(probe_path, exc.lineno, exc.colno)
        ) from None
    try:
        check_plan(plan)
    except PlanError as exc:
        exc.location = exc.location or Location(probe_path, 1, 1)
        raise
    return plan


def make_probe_plan(
    root: str | Path,
    *,
    python: str | None = None,
    seed: int = 0,
    episode_id: str = DEFAULT_EPISODE_ID,
) -> dict[str, Any]:
    """Record a probe plan by playing the environment's oracle for one episode.

    Serves the environment at ``root`` with uvicorn on a free 127.0.0.1 port (its own
    interpreter), opens one WebSocket session, resets with ``seed`` and ``episode_id``, and
    steps with the oracle's action for each observation until ``done`` or 100 actions (the
    plan's limit; the episode may then continue past the plan). The oracle runs out of process
    (:class:`envkit.policy.PolicyProcess`). Server and oracle are stopped before returning,
    also on error. Takes about one server start-up (1-3 s) plus the episode.

    Args:
        root: the environment directory (its ``openenv.yaml`` names ``app`` and the oracle,
            ``envkit.oracle`` or the legacy ``validation.oracle``).
        python: the environment's interpreter; default ``root/.venv/bin/python`` when it
            exists, else the current one (:func:`envkit.envdir.project.resolve_python`).
        seed: reset seed (0..2**32-1), written into the plan.
        episode_id: reset episode id (1-128 characters), written into the plan.

    Returns:
        The plan dict in OpenEnv's schema 1 (checked with :func:`check_plan`); write it with
        :func:`dumps`.

    Raises:
        SpecError: ``openenv.yaml`` is missing or invalid.
        PlanError: no oracle is declared, the episode cannot be played (an error frame, the
            oracle fails), or the result breaks the plan schema.
        ServerStartError: the interpreter lacks the OpenEnv runtime, or the server does not
            become healthy within ``envkit.startup_timeout_s``.
    """
    root = Path(root).resolve()
    if type(seed) is not int or not 0 <= seed <= MAX_SEED:
        raise PlanError(f"`seed` must be an integer in 0..{MAX_SEED}; got {seed!r}.")
    if not 1 <= len(episode_id) <= 128:
        raise PlanError("`episode_id` must have 1-128 characters.")
    # Imported here: the manifest model and the server cost ~100 ms of imports that writing
    # or reading a plan document (`envkit init`, every validate) never needs.
    from envkit.envdir.manifest import read_manifest
    from envkit.envdir.project import resolve_python

    manifest = read_manifest(root)
    spec = manifest.spec
    if not spec.oracle:
        raise PlanError(
            f"{root / MANIFEST_NAME} declares no oracle, so there is nothing to play.",
            hint="Declare `envkit: {oracle: server.oracle:policy}` (a "
            "function observation dict -> action dict), or write the plan by hand.",
        )
    from envkit.server import start_server

    interpreter = resolve_python(root, python)
    server = start_server(root, manifest.app, python=interpreter)
    try:
        server.wait_healthy(timeout_s=spec.startup_timeout_s)
        return play_probe_plan(
            server.url,
            root,
            python=interpreter,
            oracle=spec.oracle,
            seed=seed,
            episode_id=episode_id,
            timeout_s=max(spec.step_timeout_s * 6, 30.0),
        )
    finally:
        server.stop()


def play_probe_plan(
    base_url: str,
    root: str | Path,
    *,
    python: str,
    oracle: str,
    seed: int = 0,
    episode_id: str = DEFAULT_EPISODE_ID,
    timeout_s: float = 30.0,
) -> dict[str, Any]:
    """Record a probe plan against an already running server (see :func:`make_probe_plan`).

    Args:
        base_url: ``http://host:port`` of the served environment.
        root: the environment directory (the oracle's module is imported from there).
        python: the environment's interpreter (runs the oracle).
        oracle: ``module:callable``.
        seed: reset seed, 0..2**32-1.
        episode_id: reset episode id, 1-128 characters.
        timeout_s: seconds allowed for each answer of the server and of the oracle.

    Returns:
        The plan dict (checked).

    Raises:
        PlanError: an error frame, a transport failure or an oracle failure (the message
            says after how many actions), or a plan that breaks the schema.
    """
    from envkit.policy import PolicyProcess
    from envkit.wire import EnvSession

    actions: list[dict[str, Any]] = []
    try:
        with (
            PolicyProcess(oracle, Path(root), python, timeout_s=timeout_s) as policy,
            EnvSession(base_url, timeout_s=timeout_s) as session,
        ):
            result = session.reset(seed=seed, episode_id=episode_id)
            while not result.done and len(actions) < MAX_PLAN_ACTIONS:
                action = policy(result.observation)
                actions.append(action)
                result = session.step(action)
    except (PolicyError, WireError) as exc:
        raise PlanError(
            f"Cannot record the probe plan: after {len(actions)} action(s): {exc.message}",
            hint="Run `envkit validate` to see what fails in the episode.",
        ) from None
    plan = plan_document(actions, seed=seed, episode_id=episode_id)
    check_plan(plan)
    return plan
