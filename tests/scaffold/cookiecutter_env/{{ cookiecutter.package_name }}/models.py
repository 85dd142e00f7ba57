"""Action and observation of the {{ cookiecutter.project_name }} environment.

The agent sees a target phrase and must repeat it exactly. Both models forbid unknown fields
(OpenEnv's `Action`/`Observation` use `extra="forbid"`), so a typo in an action is a
validation error, not a silently ignored field.
"""

from pydantic import Field

from openenv.core.env_server.types import Action, Observation

MAX_MESSAGE_CHARS = 200


class {{ cookiecutter.class_prefix }}Action(Action):
    """One attempt at repeating the target phrase."""

    message: str = Field(
        ...,
        max_length=MAX_MESSAGE_CHARS,
        description="Your attempt at repeating the target phrase exactly.",
    )


class {{ cookiecutter.class_prefix }}Observation(Observation):
    """What the agent sees after `reset` and after every `step`.

    `reward` (in [0, 1]) and `done` are inherited from `Observation` and travel at the top
    level of the wire frame.
    """

    target: str = Field(default="", description="The phrase to repeat exactly.")
    echoed_message: str = Field(default="", description="Your last message, as received.")
    similarity: float = Field(default=0.0, ge=0.0, le=1.0,
                              description="Similarity of your last message to the target, 0..1.")
    attempts_left: int = Field(default=0, ge=0, description="Steps left in this episode.")
    feedback: str = Field(default="", description="A short note on the last step.")
