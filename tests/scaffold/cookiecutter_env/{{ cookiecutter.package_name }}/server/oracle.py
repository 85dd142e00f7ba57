"""Oracle policy for `envkit validate`: reaches the maximum reward (1.0) in one step.

`envkit.oracle: server.oracle:policy` in openenv.yaml points here. A policy maps the
observation dict (as sent on the wire) to an action dict.
"""

from typing import Any, Dict


def policy(observation: Dict[str, Any]) -> Dict[str, Any]:
    """Repeat the target phrase exactly."""
    return {"message": observation.get("target", "")}
