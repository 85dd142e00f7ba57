"""Action and observations of the v010 test environment: `reset` returns its own type."""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class V010Action(Action):
    """Guess the target word."""

    message: str = Field(..., max_length=40, description="A guess.")


class V010ResetObservation(Observation):
    """What `reset` returns (published as /schema `reset_observation`)."""

    target: str = Field(..., description="The word to guess.")
    instructions: str = Field(..., description="How to play; only sent on reset.")


class V010Observation(Observation):
    """What `step` returns; has no `instructions` and forbids extra fields."""

    target: str = Field(default="", description="The word to guess.")
    count: int = Field(default=0, ge=0, description="Steps taken in this episode.")
