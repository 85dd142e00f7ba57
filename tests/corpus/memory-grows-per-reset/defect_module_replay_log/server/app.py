"""Read a generated passage about 40 people and answer one person's age; 1.0 if right, else 0.0.

Every episode is recorded in a module-level replay buffer, to be dumped to disk at shutdown.
"""
import atexit
import json
import random
import re
from typing import Any, Dict, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

NAMES = ["Ada", "Bo", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jo", "Kai", "Lea",
         "Max", "Nia", "Oz", "Pia", "Quin", "Rae", "Sol", "Tess"]
SURNAMES = ["Park", "Reyes", "Okafor", "Smith", "Novak", "Haddad", "Ito", "Berg"]
REPLAY: List[Dict[str, Any]] = []


@atexit.register
def _dump_replay() -> None:  # pragma: no cover - shutdown only
    with open("/tmp/reading_replay.jsonl", "w") as f:
        for ep in REPLAY:
            f.write(json.dumps(ep) + "\n")


class AnswerAction(Action):
    answer: str


class ReadingObservation(Observation):
    passage: str = ""
    question: str = ""


class ReadingEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._record: Optional[Dict[str, Any]] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ReadingObservation:
        rng = random.Random(seed)
        people = rng.sample([f"{n} {s}" for n in NAMES for s in SURNAMES], 40)
        ages = {p: rng.randint(18, 90) for p in people}
        passage = " ".join(f"{p} lives on {rng.choice(['Oak', 'Elm', 'Main'])} Street and is "
                           f"{a} years old." for p, a in ages.items())
        who = rng.choice(people)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        self._record = {"episode_id": self._state.episode_id, "seed": seed, "passage": passage,
                        "question": f"How old is {who}?", "answer": ages[who], "transcript": []}
        REPLAY.append(self._record)
        return ReadingObservation(passage=passage, question=self._record["question"], reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ReadingObservation:
        rec = self._record
        if rec is None or rec.get("done"):
            return ReadingObservation(done=True, reward=0.0)
        self._state.step_count += 1
        reward = 1.0 if action.answer.strip() == str(rec["answer"]) else 0.0
        rec["transcript"].append({"action": action.answer, "reward": reward})
        rec["done"] = True
        return ReadingObservation(done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    who = observation["question"][len("How old is "):-1]
    m = re.search(re.escape(who) + r" lives on \w+ Street and is (\d+) years old", observation["passage"])
    return {"answer": m.group(1)}


app = create_app(ReadingEnv, AnswerAction, ReadingObservation, env_name="reading_ages",
                 max_concurrent_envs=8)
