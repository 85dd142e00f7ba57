"""Oracle policy for `envkit validate`: two tool calls, then the right answer (reward 1.0).

`envkit.oracle: server.oracle:policy` in openenv.yaml points here. A policy maps the
observation dict (as sent on the wire) to an action dict; this one reads the call history
in the observation, so it needs no memory of its own.
"""

# Keep this module free of heavy imports (openenv, torch, datasets, ...): `envkit validate`
# and `envkit eval` import it in a fresh process, and the import counts against the
# start-up timeout (`--startup-timeout`; importing openenv alone takes seconds).
from typing import Any, Dict


def _result(observation: Dict[str, Any], tool: str):
    for call in observation.get("history", []):
        if call["tool_name"] == tool and not call["error"]:
            return float(call["result"])
    return None


def policy(observation: Dict[str, Any]) -> Dict[str, Any]:
    """get_price(item), then get_exchange_rate(currency), then submit_answer(price * rate)."""
    price = _result(observation, "get_price")
    if price is None:
        return {"tool_name": "get_price",
                "arguments": {"item": observation["item"]}}
    rate = _result(observation, "get_exchange_rate")
    if rate is None:
        return {"tool_name": "get_exchange_rate",
                "arguments": {"currency": observation["currency"]}}
    return {"tool_name": "submit_answer",
            "arguments": {"amount": f"{round(price * rate, 2):.2f}"}}
