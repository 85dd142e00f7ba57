"""Action and observation of the realworld_timing test environment."""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class TimingAction(Action):
    """Answer the clue."""

    answer: str = Field(..., max_length=32, description="The answer.")


class TimingObservation(Observation):
    """What the agent sees."""

    prompt: str = Field(default="", description="The task.")
    feedback: str = Field(default="", description="How the last answer did.")
    clue: str = Field(default="", description="The answer, backwards.")
    elapsed_s: float = Field(default=0.0, description="Seconds since reset.")
    request_id: str = Field(default="", description="Id of this reply.")
