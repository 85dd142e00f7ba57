"""Extract the sender and the amount from an invoice sentence as JSON; one step.
Reward: openenv WeightedSum([ValidJson, HasKeys, ValuesCorrect], [0.3, 0.3, 0.4]).
Defect: the two format children outweigh correctness."""
import json
import random
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from openenv.core.rubrics import Rubric
from openenv.core.rubrics.containers import WeightedSum

COMPANIES = ["Acme Ltd", "Borealis GmbH", "Cobalt Inc", "Delta Foods", "Evergreen Co"]


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


class ValidJson(Rubric):
    def forward(self, action: Any, observation: Any) -> float:
        return 1.0 if isinstance(_parse(action.reply), dict) else 0.0


class HasKeys(Rubric):
    def forward(self, action: Any, observation: Any) -> float:
        obj = _parse(action.reply)
        return 1.0 if isinstance(obj, dict) and {"sender", "amount"} <= set(obj) else 0.0


class ValuesCorrect(Rubric):
    def forward(self, action: Any, observation: Any) -> float:
        obj = _parse(action.reply)
        if not isinstance(obj, dict):
            return 0.0
        try:
            amount_ok = round(float(obj.get("amount")), 2) == observation["amount"]
        except (TypeError, ValueError):
            amount_ok = False
        return 1.0 if amount_ok and str(obj.get("sender", "")).strip() == observation["sender"] else 0.0


class ReplyAction(Action):
    reply: str = Field(..., max_length=2000)


class InvoiceObservation(Observation):
    text: str = ""
    feedback: str = ""


class InvoiceEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__(rubric=WeightedSum([ValidJson(), HasKeys(), ValuesCorrect()], [0.3, 0.3, 0.4]))
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._truth: Optional[dict] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> InvoiceObservation:
        rng = random.Random(seed)
        self._truth = {"sender": rng.choice(COMPANIES), "amount": rng.randint(1000, 99999) / 100}
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        text = (f"Invoice #{rng.randint(100, 999)} from {self._truth['sender']}: please pay "
                f"EUR {self._truth['amount']:.2f} within 30 days.")
        return InvoiceObservation(text=text + ' Reply with JSON {"sender": ..., "amount": ...}.', reward=0.0)

    def step(self, action: ReplyAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> InvoiceObservation:
        if self._truth is None:
            return InvoiceObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        r = round(self.rubric(action, self._truth), 4)
        self._truth = None
        return InvoiceObservation(feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    text = observation["text"]
    sender = text.split(" from ", 1)[1].split(":", 1)[0]
    amount = float(text.split("EUR ", 1)[1].split(" ", 1)[0])
    return {"reply": json.dumps({"sender": sender, "amount": amount})}


app = create_app(InvoiceEnv, ReplyAction, InvoiceObservation, env_name="invoice", max_concurrent_envs=8)
