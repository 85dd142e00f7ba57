"""Action and observation of the realworld_unseeded test environment."""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class UnseededAction(Action):
    """Guess the code."""

    answer: str = Field(..., max_length=6, description="The answer.")


class UnseededObservation(Observation):
    """What the agent sees."""

    prompt: str = Field(default="", description="The task.")
    feedback: str = Field(default="", description="How the last answer did.")
