"""Action and observation of the seed_duel test environment."""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class DuelAction(Action):
    """Call a number from 1 to 6."""

    answer: str = Field(..., max_length=8, description="The number called.")


class DuelObservation(Observation):
    """What the agent sees."""

    prompt: str = Field(default="", description="The task.")
    target: int = Field(default=0, description="The number to reach.")
    seat: int = Field(default=0, description="The table's seat number, drawn with the target.")
    opponent: int = Field(default=0, description="The opponent's last roll (0 before a step).")
