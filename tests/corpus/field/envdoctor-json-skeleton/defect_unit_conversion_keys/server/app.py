"""Unit conversion: answer with a JSON object {value, unit, reasoning}."""
import json
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

CONV = {("km", "m"): 1000.0, ("kg", "g"): 1000.0, ("h", "min"): 60.0, ("m", "cm"): 100.0,
        ("L", "mL"): 1000.0, ("min", "s"): 60.0}


class TaskAction(Action):
    reply: str = ""


class TaskObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def make_task(rng: random.Random) -> dict:
    src, dst = rng.choice(sorted(CONV))
    qty = rng.randint(2, 90) + rng.choice([0, 0.5, 0.25])
    prompt = (f"Convert {qty} {src} to {dst}. Reply with a JSON object with keys "
              f'"value" (number), "unit" (string) and "reasoning" (string).')
    return {"obs": {"prompt": prompt}, "value": qty * CONV[(src, dst)], "unit": dst}


def grade(task: dict, action: TaskAction):
    try:
        obj = json.loads(action.reply)
    except ValueError:
        return 0.0, "Not JSON."
    if not isinstance(obj, dict):
        return 0.0, "Not a JSON object."
    score = 0.0
    if {"value", "unit", "reasoning"} <= set(obj):
        score += 0.4  # follows the schema
    try:
        value_ok = abs(float(obj.get("value")) - task["value"]) < 1e-6
    except (TypeError, ValueError):
        value_ok = False
    if value_ok and obj.get("unit") == task["unit"]:
        score += 0.6
    return score, f"score {score:.1f}"


def policy(observation: dict) -> dict:
    m = re.search(r"Convert ([\d.]+) (\w+) to (\w+)\.", observation["prompt"])
    qty, src, dst = float(m.group(1)), m.group(2), m.group(3)
    return {"reply": json.dumps({"value": qty * CONV[(src, dst)], "unit": dst,
                                 "reasoning": f"1 {src} = {CONV[(src, dst)]:g} {dst}"})}


class TaskEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[dict] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TaskObservation:
        self._task = make_task(random.Random(seed))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return TaskObservation(**self._task["obs"])

    def step(self, action: TaskAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TaskObservation:
        if self._task is None or self._done:
            return TaskObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(self._task, action)
        return TaskObservation(**self._task["obs"], feedback=feedback, done=True,
                               reward=float(reward))

    @property
    def state(self) -> State:
        return self._state


app = create_app(TaskEnv, TaskAction, TaskObservation, env_name="defect_unit_conversion_keys",
                 max_concurrent_envs=8)
