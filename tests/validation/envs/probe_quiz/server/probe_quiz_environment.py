"""probe_quiz: answer a + b (drawn from the seed) in up to 3 attempts.

Clean by default: 1.0 for the right sum (spacing, case, a lead-in such as "The answer is"
and number forms like "73.0" are accepted), 0.0 otherwise; an answer that is no number is
refused in `error` with 0.0. `PROBE_MODE` switches on one defect, marked `# DEFECT:`:

stall   a wrong number earns 0.4 on every attempt (EK513)
format  one attempt; any integer earns 0.5 (EK514)
errors  an answer that is no number earns 0.2 with its error (EK515)
brittle one attempt; only the exact string `str(a + b)` is right (EK516)
hang    an answer over 100 000 characters blocks `step` for 20 s (EK517)
grow    12 attempts, every answer appended to `observation.log` (EK518)
leak    every `reset` keeps 64 KiB in a module-level list (EK519)
options the `difficulty` option of `reset` is accepted and ignored (EK520)
reveal  a wrong answer's feedback says the expected sum (EK522)
anyreply one attempt; any non-empty answer earns 0.35 (EK524)
longnumber one attempt; a wrong number of six digits or more earns 0.6 (EK525)
"""

import os
import random
import re
import time
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

try:
    from ..models import QuizAction, QuizObservation
except ImportError:
    from models import QuizAction, QuizObservation

MODE = os.environ.get("PROBE_MODE", "")
ATTEMPTS = 12 if MODE == "grow" else 1 if MODE in ("format", "brittle", "anyreply", "longnumber") else 3
_KEPT: List[bytes] = []
LEAD_IN = re.compile(r"^(the answer is|answer:)\s*", re.IGNORECASE)


def parse(text: str) -> Optional[float]:
    """The number an answer states, or None."""
    text = LEAD_IN.sub("", text.strip().casefold()).rstrip(".")
    try:
        return float(text)
    except ValueError:
        return None


class QuizEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._terms: Optional[tuple] = None
        self._done = False
        self._log: List[str] = []

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              difficulty: Optional[str] = None, **kwargs: Any) -> QuizObservation:
        """Start an episode.

        Args:
            difficulty: 'easy' (terms 10-49, the default) or 'hard' (terms 100-999).
        """
        rng = random.Random(seed)
        if difficulty == "hard" and MODE != "options":  # DEFECT (options): ignored
            self._terms = (rng.randint(100, 999), rng.randint(100, 999))
        else:
            self._terms = (rng.randint(10, 49), rng.randint(10, 49))
        self._done, self._log = False, []
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        if MODE == "leak":
            _KEPT.append(b"\x01" * (64 * 1024))  # DEFECT: memory kept on every reset
        return self._obs("", "", 0.0)

    def step(self, action: QuizAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if self._terms is None or self._done:
            obs = self._obs("The episode is over: call reset().", "", 0.0)
            obs.done = True
            return obs
        text = action.answer
        if MODE == "hang" and len(text) > 100_000:
            time.sleep(20)  # DEFECT: a long answer blocks the server
        self._state.step_count += 1
        target = sum(self._terms)
        value = parse(text)
        right = text == str(target) if MODE == "brittle" else value == target
        error, reward = "", 0.0
        if right:
            reward = 1.0
        elif value is None:
            error = "not a number"
            reward = 0.2 if MODE == "errors" else 0.0  # DEFECT (errors): errors pay
        elif MODE == "stall":
            reward = 0.4  # DEFECT: every wrong attempt pays, so stalling pays
        elif MODE == "longnumber" and sum(c.isdigit() for c in text) >= 6:
            reward = 0.6  # DEFECT: "precision credit" for a long number, right or not
        elif MODE == "format" and re.fullmatch(r"-?\d+", text.strip()):
            reward = 0.5  # DEFECT: the format alone earns half the range
        if MODE == "anyreply" and not right and text.strip():
            reward = 0.35  # DEFECT: any non-empty reply earns a participation credit
        if MODE == "grow":
            self._log.append(f"attempt {self._state.step_count}: {text[:40]!r} " + "." * 120)
        self._done = right or self._state.step_count >= ATTEMPTS
        feedback = "Right." if right else "Wrong."
        if MODE == "reveal" and not right:
            feedback = f"Wrong: the expected answer was {target}."  # DEFECT: the answer shown
        return self._obs(feedback, error, reward)

    def _obs(self, feedback: str, error: str, reward: float) -> QuizObservation:
        a, b = self._terms or (0, 0)
        return QuizObservation(question=f"What is {a} + {b}?", a=a, b=b, feedback=feedback,
                               error=error, log=list(self._log), done=self._done,
                               reward=reward)

    @property
    def state(self) -> State:
        return self._state
