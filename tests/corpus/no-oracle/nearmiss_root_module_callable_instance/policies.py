"""Baseline policies for this environment; ORACLE is the one envkit plays (envkit.oracle)."""
from typing import Any, Dict


class Bisection:
    """Guess the middle of the interval still possible (a hit within 7 guesses)."""

    def __init__(self, bias: int = 0) -> None:
        self.bias = bias

    def __call__(self, observation: Dict[str, Any]) -> Dict[str, Any]:
        low, high = int(observation["low"]), int(observation["high"])
        return {"guess": min(high, (low + high) // 2 + self.bias)}


ORACLE = Bisection()
