"""Action and observation of the knobs test environment, and its mode switch."""

import os
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from openenv.core.env_server.types import Action, Observation


def mode() -> str:
    """The misbehaviour switched on: the text of the file named by KNOBS_MODE_FILE (read on
    every call, so one server serves many modes), else KNOBS_MODE, else "" (clean)."""
    path = os.environ.get("KNOBS_MODE_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError:
            return ""
    return os.environ.get("KNOBS_MODE", "")


class KnobsAction(Action):
    """Guess the target word."""

    message: str = Field(..., max_length=40, description="A guess.")

    @model_validator(mode="before")
    @classmethod
    def _coerce(cls, data: Any) -> Any:
        """Mode "lax" (EK408): coerce anything (wrong types, missing field) into a guess."""
        if mode() == "lax" and isinstance(data, dict):
            data = {k: v for k, v in data.items() if k in ("message", "metadata")}
            data["message"] = str(data.get("message", ""))
        return data


class KnobsObservation(Observation):
    """What the agent sees."""

    target: str = Field(default="", description="The word to guess.")
    count: int = Field(default=0, ge=0, description="Steps taken in this episode.")
    echoed: str = Field(default="", description="The last guess.")
