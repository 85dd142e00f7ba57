"""Action and observation of the declared_relative test environment."""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class FixedAction(Action):
    """Answer the clue."""

    answer: str = Field(..., max_length=32, description="The answer.")


class FixedObservation(Observation):
    """What the agent sees."""

    prompt: str = Field(default="", description="The task.")
    feedback: str = Field(default="", description="How the last answer did.")
    clue: str = Field(default="", description="The answer, backwards.")
