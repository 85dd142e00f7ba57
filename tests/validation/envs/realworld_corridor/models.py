"""Action and observation of the realworld_corridor test environment."""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class CorridorAction(Action):
    """A move, one of the observation's `legal_moves`."""

    move: str = Field(..., max_length=16, description="`left` or `right`.")


class CorridorObservation(Observation):
    """What the agent sees."""

    position: int = Field(default=0, description="Cell 0..5; the goal is cell 5.")
    legal_moves: list[str] = Field(default_factory=list, description="Moves allowed now.")
    feedback: str = Field(default="", description="How the last move did.")
