"""Action and observation of the probe_quiz test environment."""

from typing import List

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class QuizAction(Action):
    """Answer the sum (free text: no `max_length`, so a 200 KB answer reaches `step`)."""

    answer: str = Field(..., description="The sum of a and b.")


class QuizObservation(Observation):
    """What the agent sees."""

    question: str = Field(default="", description="The task.")
    a: int = Field(default=0, description="First term.")
    b: int = Field(default=0, description="Second term.")
    feedback: str = Field(default="", description="How the last answer did.")
    error: str = Field(default="", description="Why the last answer was refused, if it was.")
    log: List[str] = Field(default_factory=list, description="Earlier answers (mode grow).")
