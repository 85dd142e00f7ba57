"""Action and observation of the flood test environment."""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class FloodAction(Action):
    """Any word."""

    answer: str = Field(..., max_length=20, description="The answer.")


class FloodObservation(Observation):
    """What the agent sees: a prompt and 10 MB of padding."""

    prompt: str = Field(default="", description="The task.")
    padding: str = Field(default="", description="10 MB the agent does not need.")
