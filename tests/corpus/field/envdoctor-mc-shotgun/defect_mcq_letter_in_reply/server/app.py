"""Multiple-choice science questions; answer with the option letter."""
import json
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

QUESTIONS = [
    ("Which planet is closest to the Sun?", ["Venus", "Mercury", "Mars", "Earth"], 1),
    ("What gas do plants absorb for photosynthesis?", ["Oxygen", "Nitrogen", "Carbon dioxide", "Helium"], 2),
    ("What is the chemical symbol for sodium?", ["Na", "So", "Sd", "S"], 0),
    ("Which organ pumps blood?", ["Liver", "Lung", "Kidney", "Heart"], 3),
    ("What is H2O commonly called?", ["Salt", "Water", "Ammonia", "Ozone"], 1),
]
LETTERS = "ABCD"


class TaskAction(Action):
    reply: str = ""


class TaskObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def make_task(rng: random.Random) -> dict:
    q, opts, gold = QUESTIONS[rng.randrange(len(QUESTIONS))]
    lines = "\n".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(opts))
    return {"obs": {"prompt": f"{q}\n{lines}\nAnswer with the letter of the correct option."},
            "gold": LETTERS[gold]}


def grade(task: dict, action: TaskAction):
    words = re.findall(r"[A-Z]+", action.reply.upper())
    ok = task["gold"] in words
    return (1.0, "Correct.") if ok else (0.0, "Incorrect.")


def policy(observation: dict) -> dict:
    q = observation["prompt"].split("\n")[0]
    for qq, opts, gold in QUESTIONS:
        if qq == q:
            return {"reply": LETTERS[gold]}
    return {"reply": ""}


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


app = create_app(TaskEnv, TaskAction, TaskObservation, env_name="defect_mcq_letter_in_reply",
                 max_concurrent_envs=8)
