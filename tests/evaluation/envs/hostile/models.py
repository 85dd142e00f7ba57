"""Action and observation of the hostile test environment."""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class HostileAction(Action):
    """Say something."""

    message: str = Field(..., max_length=20, description="Any text.")


class HostileObservation(Observation):
    """What the agent sees."""

    echoed: str = Field(default="", description="The last message.")
