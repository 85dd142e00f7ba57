"""Capital-city trivia from a small dataset; one attempt.
Defect: the row's bookkeeping (id, source, ground_truth) is put in the observation metadata for logging."""
import random
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

ROWS = [{"id": f"cap-{i:03d}", "country": c, "ground_truth": a, "source": "capitals-v2"}
        for i, (c, a) in enumerate([("Peru", "Lima"), ("Kenya", "Nairobi"), ("Norway", "Oslo"),
                                    ("Chile", "Santiago"), ("Ghana", "Accra"), ("Nepal", "Kathmandu"),
                                    ("Laos", "Vientiane"), ("Fiji", "Suva")])]
CAPITALS = {r["country"]: r["ground_truth"] for r in ROWS}


class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class TriviaObservation(Observation):
    question: str = ""
    feedback: str = ""


class TriviaEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._row: Optional[dict] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TriviaObservation:
        self._row = random.Random(seed).choice(ROWS)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        meta = {k: v for k, v in self._row.items() if k != "country"}  # for the trainer's logs
        return TriviaObservation(question=f"What is the capital of {self._row['country']}?",
                                 reward=0.0, metadata=meta)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TriviaObservation:
        if self._done or self._row is None:
            return TriviaObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        ok = action.answer.strip().lower() == self._row["ground_truth"].lower()
        return TriviaObservation(feedback="Correct." if ok else "Incorrect.", done=True,
                                 reward=1.0 if ok else 0.0, metadata={"id": self._row["id"]})

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    country = observation["question"].rsplit(" ", 1)[1].rstrip("?")
    return {"answer": CAPITALS[country]}


app = create_app(TriviaEnv, AnswerAction, TriviaObservation, env_name="trivia", max_concurrent_envs=8)
