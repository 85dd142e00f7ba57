"""Action and observation of the probe_code test environment."""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation


class CodeAction(Action):
    """Python source defining the function the observation names."""

    source: str = Field(..., max_length=20000, description="Python source of the solution.")


class CodeObservation(Observation):
    """What the agent sees."""

    prompt: str = Field(default="", description="The task.")
    function: str = Field(default="", description="The function to define.")
    passed: int = Field(default=0, description="Tests passed by the last submission.")
    total: int = Field(default=0, description="Number of tests.")
    feedback: str = Field(default="", description="How the last submission did.")
