"""Reading comprehension via a tool call: read the passage, call submit_answer(text)."""
import json
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PASSAGES = [
    ("The lighthouse at Varn was built in 1841 by the engineer Tomas Reller. It was automated in 1962.",
     "Who built the lighthouse at Varn?", "Tomas Reller"),
    ("Mira planted olive trees on the north slope and almond trees by the river. The almonds failed in the frost.",
     "What did Mira plant by the river?", "almond trees"),
    ("The expedition left Kerran on a Tuesday and reached the pass at Ostwick nine days later.",
     "Where did the expedition reach after nine days?", "the pass at Ostwick"),
    ("After the merger, the company moved its headquarters from Leeds to Bristol and kept a small office in York.",
     "Where did the company move its headquarters to?", "Bristol"),
]
TOOLS = [{"name": "submit_answer", "description": "Submit the answer to the question.",
          "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                           "required": ["text"]}}]


class TaskAction(Action):
    tool_name: str = ""
    arguments: dict = {}


class TaskObservation(Observation):
    prompt: str = ""
    feedback: str = ""
    tools: list = []


def make_task(rng: random.Random) -> dict:
    passage, q, gold = PASSAGES[rng.randrange(len(PASSAGES))]
    return {"obs": {"prompt": f"Passage: {passage}\nQuestion: {q}", "tools": TOOLS}, "gold": gold}


def grade(task: dict, action: TaskAction):
    if action.tool_name != "submit_answer":
        return 0.0, "Unknown tool."
    text = str(action.arguments.get("text", ""))
    ok = task["gold"].lower() in text.lower()
    return (1.0, "Correct.") if ok else (0.0, "Incorrect.")


def policy(observation: dict) -> dict:
    q = observation["prompt"].split("Question: ")[1]
    gold = next(g for _, qq, g in PASSAGES if qq == q)
    return {"tool_name": "submit_answer", "arguments": {"text": gold}}


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


app = create_app(TaskEnv, TaskAction, TaskObservation, env_name="defect_reading_tool_substring",
                 max_concurrent_envs=8)
