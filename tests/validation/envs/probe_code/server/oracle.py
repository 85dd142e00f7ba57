"""Oracle of probe_code: the function, written out."""

from typing import Any, Dict


def policy(observation: Dict[str, Any]) -> Dict[str, Any]:
    return {"source": f"def {observation['function']}(a, b):\n    return a * b + 1\n"}
