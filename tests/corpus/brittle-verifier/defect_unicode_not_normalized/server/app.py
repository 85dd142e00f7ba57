"""English -> French vocabulary (every answer has an accent); one attempt.
The verifier drops a lead-in, surrounding space, final punctuation and case.
Defect: no unicodedata.normalize, so 'cafe\\u0301' (NFD) is wrong while 'caf\\u00e9' (NFC) is right."""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

VOCAB = {"coffee": "café", "school": "école", "summer": "été", "window": "fenêtre", "forest": "forêt",
         "pupil": "élève", "hospital": "hôpital", "castle": "château"}


def _clean(text: str) -> str:
    text = re.split(r"(?i)\banswer(?: is)?\s*:?", text)[-1]
    return text.strip().strip(".!?\"'").strip().casefold()


class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class VocabObservation(Observation):
    question: str = ""
    word: str = ""
    feedback: str = ""


class VocabEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._expected: Optional[str] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> VocabObservation:
        word = random.Random(seed).choice(sorted(VOCAB))
        self._expected = VOCAB[word]
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return VocabObservation(question=f"Translate '{word}' into French (one word).", word=word, reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> VocabObservation:
        if self._expected is None:
            return VocabObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        ok = _clean(action.answer) == self._expected.casefold()
        self._expected = None
        return VocabObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": VOCAB[observation["word"]]}


app = create_app(VocabEnv, AnswerAction, VocabObservation, env_name="vocab", max_concurrent_envs=8)
