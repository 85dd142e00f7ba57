"""Action and observation of the knobs test environment."""

import os
from typing import Any

from pydantic import Field, model_validator

from openenv.core.env_server.types import Action, Observation


class KnobsAction(Action):
    """Guess the target word."""

    message: str = Field(..., max_length=40, description="A guess.")

    if os.environ.get("KNOBS_LAX") == "1":
        # Misbehaviour for EK408: coerce anything (wrong types, missing field) into a guess.
        @model_validator(mode="before")
        @classmethod
        def _coerce(cls, data: Any) -> Any:
            if isinstance(data, dict):
                data = {k: v for k, v in data.items() if k in ("message", "metadata")}
                data["message"] = str(data.get("message", ""))
            return data


class KnobsObservation(Observation):
    """What the agent sees."""

    target: str = Field(default="", description="The word to guess.")
    count: int = Field(default=0, ge=0, description="Steps taken in this episode.")
    echoed: str = Field(default="", description="The last guess.")
