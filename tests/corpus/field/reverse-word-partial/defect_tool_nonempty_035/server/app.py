"""Reverse the word by calling the submit_reversal tool."""
import json
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

TOOLS = [{"name": "submit_reversal", "description": "Submit the reversed word.",
          "input_schema": {"type": "object", "properties": {"word": {"type": "string"}},
                           "required": ["word"]}}]


class TaskAction(Action):
    tool_name: str = ""
    arguments: dict = {}


class TaskObservation(Observation):
    prompt: str = ""
    feedback: str = ""
    tools: list = []


WORDS = ["stressed", "planet", "garden", "bottle", "kitchen", "thunder", "marble", "pencil",
         "orbit", "window", "lantern", "copper"]


def make_task(rng: random.Random) -> dict:
    word = rng.choice(WORDS)
    return {"obs": {"prompt": f"Reverse this word: {word}", "tools": TOOLS}, "gold": word[::-1]}


def grade(task: dict, action: TaskAction):
    if action.tool_name != "submit_reversal":
        return 0.0, "Unknown tool."
    word = str(action.arguments.get("word", "")).strip().lower()
    if word == task["gold"]:
        return 1.0, "Correct."
    if word:
        return 0.35, "Attempted."
    return 0.0, "Empty."


def policy(observation: dict) -> dict:
    word = observation["prompt"].rsplit(" ", 1)[1]
    return {"tool_name": "submit_reversal", "arguments": {"word": word[::-1]}}


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


app = create_app(TaskEnv, TaskAction, TaskObservation, env_name="defect_tool_nonempty_035",
                 max_concurrent_envs=8)
