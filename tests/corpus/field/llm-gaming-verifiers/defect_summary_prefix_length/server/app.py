"""Passage summarisation graded by a checklist rubric:
  (a) structure: starts with 'Summary:' and is at least 200 characters  -> 0.4
  (b) coverage: fraction of the passage's key terms mentioned           -> 0.6"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PASSAGES = [
    ("Plants capture sunlight with chlorophyll and turn carbon dioxide and water into glucose, releasing oxygen.",
     ["sunlight", "chlorophyll", "glucose", "oxygen"]),
    ("Volcanoes form where magma rises through the crust; eruptions eject lava, ash and sulfur gases.",
     ["magma", "crust", "lava", "ash"]),
    ("Vaccines train the immune system: antigens prompt antibodies, and memory cells speed later defence.",
     ["immune", "antigens", "antibodies", "memory"]),
    ("Glaciers are slow rivers of ice; as they advance they carve valleys and deposit moraines of rock debris.",
     ["ice", "valleys", "moraines", "debris"]),
    ("Bees collect nectar and pollen; while foraging they pollinate flowers, and the hive turns nectar into honey.",
     ["nectar", "pollen", "pollinate", "honey"]),
    ("Tides arise from the gravity of the moon and sun pulling on the oceans, giving high and low water twice daily.",
     ["gravity", "moon", "oceans", "tides"]),
]
INSTRUCTIONS = ("Summarise the passage. Start with 'Summary:' and write at least 200 characters. "
                "Mention the passage's key ideas.")


class SummaryAction(Action):
    text: str = ""


class SummaryObservation(Observation):
    passage: str = ""
    instructions: str = INSTRUCTIONS
    feedback: str = ""


class SummaryEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._passage: Optional[str] = None
        self._terms: List[str] = []
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SummaryObservation:
        self._passage, self._terms = random.Random(seed).choice(PASSAGES)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SummaryObservation(passage=self._passage)

    def _grade(self, text: str) -> float:
        low = text.lower()
        structure = text.strip().startswith("Summary:") and len(text.strip()) >= 200
        coverage = sum(t in low for t in self._terms) / len(self._terms)
        return round(0.4 * structure + 0.6 * coverage, 4)

    def step(self, action: SummaryAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SummaryObservation:
        if self._passage is None or self._done:
            return SummaryObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        r = self._grade(action.text)
        return SummaryObservation(passage=self._passage, feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """The oracle: restates the passage (which names every key term) under the required header."""
    p = observation["passage"]
    text = f"Summary: {p} In short, the passage explains how these parts work together and why each step matters."
    while len(text) < 200:
        text += " Each part plays a role."
    return {"text": text}


app = create_app(SummaryEnv, SummaryAction, SummaryObservation, env_name="summary_rubric",
                 max_concurrent_envs=8)
