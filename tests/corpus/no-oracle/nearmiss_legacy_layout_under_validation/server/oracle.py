"""Oracle for envkit: bisection over the remaining interval (a hit within 7 guesses)."""
from typing import Any, Dict


def policy(observation: Dict[str, Any]) -> Dict[str, Any]:
    return {"guess": (int(observation["low"]) + int(observation["high"])) // 2}
