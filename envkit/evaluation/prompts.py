"""Chat messages for the ``openai`` policy: a system prompt derived from the environment's
``/schema`` (and ``/metadata``), and one user message per observation."""

from __future__ import annotations

import json
from typing import Any

from envkit.evaluation.parsing import action_fields, single_string_field


def _compact_schema(schema: dict[str, Any], fields: dict[str, Any]) -> str:
    view = {k: v for k, v in schema.items() if k not in ("properties", "title", "description")}
    view["properties"] = fields
    if "required" in view:
        view["required"] = [r for r in view["required"] if r in fields]
    return json.dumps(view, indent=2, sort_keys=True)


def system_prompt(schemas: dict[str, Any], metadata: dict[str, Any] | None = None) -> str:
    """The default system prompt: what the environment is, the action JSON Schema (without
    OpenEnv's ``metadata`` field), the observation JSON Schema and the reply format.

    Args:
        schemas: ``GET /schema`` answer (``{"action": ..., "observation": ..., "state": ...}``).
        metadata: ``GET /metadata`` answer (``name``, ``description``), when available.
    """
    action = schemas.get("action") or {}
    observation = schemas.get("observation") or {}
    obs_fields = {
        k: v
        for k, v in (observation.get("properties") or {}).items()
        if k not in ("metadata", "reward", "done")
    }
    meta = metadata or {}
    lines = ["You are an agent acting in a reinforcement-learning environment."]
    name = meta.get("name")
    if name:
        lines.append(f"Environment: {name}.")
    desc = (meta.get("description") or action.get("description") or "").strip()
    if desc:
        lines.append(f"Description: {desc}")
    lines += [
        (
            "Each turn you receive an observation (JSON) and the reward of your last action. "
            "Choose the next action to maximise the reward."
        ),
        "",
        "Observation JSON Schema:",
        _compact_schema(observation, obs_fields),
        "",
        "Action JSON Schema:",
        _compact_schema(action, action_fields(action)),
        "",
        (
            "Reply with exactly one action as a JSON object in a ```json fenced code block, "
            "with no other text."
        ),
    ]
    field = single_string_field(action)
    if field:
        lines.append(f'Example: ```json\n{{"{field}": "..."}}\n```')
    return "\n".join(lines)


def observation_message(
    observation: dict[str, Any], *, reward: float | None, step: int, error: str | None = None
) -> str:
    """The user message for one observation.

    Args:
        observation: observation fields as sent on the wire.
        reward: reward of the last step (``None`` after reset).
        step: number of steps taken so far in the episode (0 after reset).
        error: why the last reply was not accepted (parse failure or invalid action), if so.
    """
    head = "The episode starts." if step == 0 else f"Step {step} done. Reward: {reward}."
    if error:
        head = f"Your last reply was not a valid action ({error}). Reward: 0."
    body = json.dumps(observation, ensure_ascii=False, indent=2, sort_keys=True)
    return f"{head}\nObservation:\n```json\n{body}\n```\nReply with the next action."
