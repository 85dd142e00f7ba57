"""Word-frequency task: the agent returns a JSON object mapping each word of a sentence to its count."""
import json
import random
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["red", "blue", "green", "cat", "dog", "sun", "moon", "tree", "river", "stone"]


class CountAction(Action):
    answer_json: str = "{}"


class CountObservation(Observation):
    sentence: str = ""
    instructions: str = ""
    feedback: str = ""


def make_sentence(seed: Optional[int]) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS[:6]) for _ in range(rng.randint(8, 14)))


def expected_counts(sentence: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for w in sentence.split():
        out[w] = out.get(w, 0) + 1
    return out


def grade(answer_json: str, expected: Dict[str, int]) -> float:
    try:
        answer = json.loads(answer_json)
    except json.JSONDecodeError:
        return 0.0
    if not isinstance(answer, dict):
        return 0.0
    # every reported count must be right (keys may be listed in any order)
    for word, count in answer.items():
        if expected.get(word) != count:
            return 0.0
    return 1.0


class CountEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._sentence: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CountObservation:
        self._sentence = make_sentence(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CountObservation(sentence=self._sentence,
                                instructions="Return a JSON object {word: count} covering every word.")

    def step(self, action: CountAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> CountObservation:
        if self._sentence is None or self._done:
            return CountObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        r = grade(action.answer_json, expected_counts(self._sentence))
        return CountObservation(sentence=self._sentence, feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer_json": json.dumps(expected_counts(observation["sentence"]))}


app = create_app(CountEnv, CountAction, CountObservation, env_name="word_counts",
                 max_concurrent_envs=8)
