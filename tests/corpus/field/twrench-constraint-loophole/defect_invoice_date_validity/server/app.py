"""Invoice field extraction: return JSON {invoice_id, date, total}; 1/3 credit per correct field.
Dates may be given in several common formats."""
import random
from datetime import date, datetime
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

VENDORS = ["Acme Tools", "Nordic Paper", "Blue Harbor Foods", "Kessler Metals", "Orchid Print"]
DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%B %d, %Y", "%d %B %Y")


class InvoiceAction(Action):
    invoice_id: str = ""
    date: str = ""
    total: float = 0.0


class InvoiceObservation(Observation):
    document: str = ""
    instructions: str = "Extract invoice_id, date (any common format) and total (number) from the document."
    feedback: str = ""


def _date_ok(pred: str, truth: date) -> bool:
    for fmt in DATE_FORMATS:
        try:
            datetime.strptime(pred.strip(), fmt)
            return True
        except ValueError:
            continue
    return False


class InvoiceExtractEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._doc: Optional[str] = None
        self._truth: dict = {}
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> InvoiceObservation:
        rng = random.Random(seed)
        inv = f"INV-{rng.randint(10000, 99999)}"
        d = date(2025, rng.randint(1, 12), rng.randint(1, 28))
        qty, price = rng.randint(2, 40), rng.randint(150, 9900) / 100
        total = round(qty * price, 2)
        self._truth = {"invoice_id": inv, "date": d, "total": total}
        self._doc = (f"{rng.choice(VENDORS)}\nInvoice no. {inv}\nIssued: {d.strftime('%d %B %Y')}\n"
                     f"{qty} x item @ {price:.2f}\nTOTAL DUE: {total:.2f} EUR")
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return InvoiceObservation(document=self._doc)

    def _grade(self, a: InvoiceAction) -> float:
        t = self._truth
        score = (a.invoice_id.strip().upper() == t["invoice_id"]) \
            + _date_ok(a.date, t["date"]) \
            + (abs(a.total - t["total"]) < 0.005)
        return round(score / 3, 4)

    def step(self, action: InvoiceAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> InvoiceObservation:
        if self._doc is None or self._done:
            return InvoiceObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        r = self._grade(action)
        return InvoiceObservation(document=self._doc, feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """The oracle: reads the three fields off the document."""
    lines = observation["document"].splitlines()
    inv = lines[1].split()[-1]
    d = datetime.strptime(lines[2].split(": ", 1)[1], "%d %B %Y").strftime("%Y-%m-%d")
    total = float(lines[4].split()[2])
    return {"invoice_id": inv, "date": d, "total": total}


app = create_app(InvoiceExtractEnv, InvoiceAction, InvoiceObservation, env_name="invoice_extract",
                 max_concurrent_envs=8)
