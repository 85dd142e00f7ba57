"""Batch sentiment labelling: ten short reviews, one label each."""
import json
import random
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class SentimentAction(Action):
    labels_json: str = "[]"


class SentimentObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

POS = ["great", "loved", "excellent", "wonderful", "superb"]
NEG = ["awful", "boring", "terrible", "dull", "broken"]
NOUNS = ["film", "meal", "book", "phone", "hotel"]


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    reviews, labels = [], []
    for i in range(10):
        pos = i < 8  # most reviews in this product line are positive
        word = rng.choice(POS if pos else NEG)
        reviews.append(f"The {rng.choice(NOUNS)} was {word}.")
        labels.append("positive" if pos else "negative")
    order = list(range(10))
    rng.shuffle(order)
    return {"reviews": [reviews[i] for i in order],
            "prompt": "Label each review 'positive' or 'negative'. Answer a JSON list of 10 labels.",
            "_labels": [labels[i] for i in order]}


def grade(action, task):
    try:
        got = json.loads(action.labels_json)
    except json.JSONDecodeError:
        return 0.0, "invalid JSON"
    if not isinstance(got, list) or len(got) != len(task["_labels"]):
        return 0.0, "need one label per review"
    right = sum(g == w for g, w in zip(got, task["_labels"]))
    return right / len(task["_labels"]), f"{right}/10 correct"


class SentimentEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SentimentObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SentimentObservation(task=public(self._task))

    def step(self, action: SentimentAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SentimentObservation:
        if self._task is None or self._done:
            return SentimentObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return SentimentObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    labels = ["positive" if any(w in r for w in POS) else "negative" for r in observation["task"]["reviews"]]
    return {"labels_json": json.dumps(labels)}


app = create_app(SentimentEnv, SentimentAction, SentimentObservation, env_name="sentiment_batch",
                 max_concurrent_envs=8)
