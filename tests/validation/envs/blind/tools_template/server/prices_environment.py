"""The Prices environment: an MCP tool-calling task (OpenEnv's `MCPEnvironment`).

Episode: `reset(seed)` makes a small price list and exchange-rate table from the seed and asks
what one item costs in another currency. Solving it takes two tool calls (`get_price`, then
`get_exchange_rate`) and a `submit_answer`. Reward, on the `submit_answer` step only: 1.0 for
the right amount (within 0.01), else partial credit for closeness, always below 0.5 (see
`score`); 0.0 on every other step, for a call that fails and for an episode that runs out of
calls. Tool errors come back as observations. The episode ends on `submit_answer` or after
MAX_STEPS calls.
"""

import math
import random
from typing import Any, Dict, List, Optional
from uuid import uuid4

from fastmcp import FastMCP
from openenv.core.env_server.mcp_environment import MCPEnvironment, get_server_tools
from openenv.core.env_server.mcp_types import CallToolAction
from openenv.core.env_server.types import Observation, State

try:
    from ..models import PricesAction, PricesObservation
except ImportError:
    from models import PricesAction, PricesObservation

MAX_STEPS = 6  # keep <= envkit.max_steps in openenv.yaml

# ---- edit the task here ------------------------------------------------------------------
ITEMS = ("lamp", "kettle", "backpack", "umbrella", "chair", "headphones", "teapot", "bicycle")
CURRENCIES = {"USD": 1.08, "GBP": 0.85, "CHF": 0.96, "JPY": 161.0, "SEK": 11.4, "CAD": 1.47}
TOLERANCE = 0.01
PARTIAL_CREDIT = 0.5  # the most a wrong amount earns (never reached): the exact one earns 1.0


def make_task(rng: random.Random) -> Dict[str, Any]:
    """Prices (EUR), exchange rates (EUR -> currency) and the question, all from the seed."""
    prices = {item: round(rng.uniform(5, 400), 2) for item in ITEMS}
    rates = {cur: round(base * rng.uniform(0.9, 1.1), 4) for cur, base in CURRENCIES.items()}
    item, currency = rng.choice(ITEMS), rng.choice(sorted(CURRENCIES))
    return {"prices": prices, "rates": rates, "item": item, "currency": currency,
            "answer": round(prices[item] * rates[currency], 2)}


def score(submitted: float, answer: float) -> float:
    """Reward of a submitted amount: 1.0 within TOLERANCE of the answer, else
    PARTIAL_CREDIT x (1 - 2 x relative error), floored at 0.0: 1 % off earns 0.49, 10 % off
    0.4, 50 % off or more (a negative amount, a price left in EUR for JPY) 0.0.

    Why partial credit: a group-relative trainer (GRPO) learns from the differences between
    the rewards of one prompt's rollouts. With 1.0 for the exact amount and 0.0 for anything
    else, a starting model that never gets it exact sees the same 0.0 in every rollout: no
    gradient (`envkit validate` reports EK523). Closeness ranks its wrong answers, and
    every wrong one stays below half the exact one's reward, so the exact answer still pays
    most.
    """
    if not math.isfinite(submitted):
        return 0.0
    error = abs(submitted - answer)
    if error <= TOLERANCE:
        return 1.0
    return max(0.0, PARTIAL_CREDIT * (1.0 - 2.0 * error / max(abs(answer), TOLERANCE)))
# -------------------------------------------------------------------------------------------


class PricesEnvironment(MCPEnvironment):
    """Find an item's price in a currency with two tools, then submit it.

    The tools are closures over this instance, and all episode state lives on it, so every
    WebSocket session can have its own instance: that is what makes
    `SUPPORTS_CONCURRENT_SESSIONS = True` true.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        mcp = FastMCP("prices")

        @mcp.tool()
        def get_price(item: str) -> float:
            """Price of one item in EUR.

            Args:
                item: name of the item, e.g. "lamp".
            """
            prices = self._task["prices"] if self._task else {}
            if item not in prices:
                raise ValueError(f"unknown item {item!r}; known items: {', '.join(ITEMS)}")
            return prices[item]

        @mcp.tool()
        def get_exchange_rate(currency: str) -> float:
            """How many units of `currency` one EUR buys.

            Args:
                currency: ISO code, e.g. "USD".
            """
            rates = self._task["rates"] if self._task else {}
            if currency not in rates:
                raise ValueError(f"unknown currency {currency!r}; known: {', '.join(CURRENCIES)}")
            return rates[currency]

        @mcp.tool()
        def submit_answer(amount: float) -> str:
            """Submit the final answer; this ends the episode.

            Args:
                amount: the price in the asked currency, rounded to 2 decimals.
            """
            self._submitted = float(amount)
            return f"submitted {amount}"

        super().__init__(mcp)
        self._tools = [{"name": t.name, "description": t.description or "",
                        "input_schema": t.parameters}
                       for t in get_server_tools(mcp).values()]
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._history: List[Dict[str, Any]] = []
        self._submitted: Optional[float] = None
        self._done = False

    def reset(
        self,
        seed: Optional[int] = None,
        episode_id: Optional[str] = None,
        **kwargs: Any,
    ) -> PricesObservation:
        """Start an episode. The same `seed` always gives the same prices, rates and question."""
        self._task = make_task(random.Random(seed))
        self._history, self._submitted, self._done = [], None, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._observation(reward=0.0)

    # MCPEnvironment routes `CallToolAction`s to the tools; these two wrappers turn the action
    # into one and add the episode logic (history, reward, done), for the sync (HTTP) and
    # async (WebSocket) paths.
    def step(self, action: PricesAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PricesObservation:
        """One tool call. Reward: `score` of the amount on `submit_answer`, else 0.0."""
        if self._task is None or self._done:
            return self._over()
        call = CallToolAction(tool_name=action.tool_name, arguments=action.arguments)
        return self._after(action, super().step(call, timeout_s=timeout_s, **kwargs))

    async def step_async(self, action: PricesAction, timeout_s: Optional[float] = None,
                         **kwargs: Any) -> PricesObservation:
        """Async twin of `step` (the WebSocket path)."""
        if self._task is None or self._done:
            return self._over()
        call = CallToolAction(tool_name=action.tool_name, arguments=action.arguments)
        return self._after(action, await super().step_async(call, timeout_s=timeout_s, **kwargs))

    def _step_impl(self, action: Any, timeout_s: Optional[float] = None,
                   **kwargs: Any) -> Observation:
        # Every action of this environment is a tool call; nothing else reaches here.
        return self._observation(reward=0.0, error="Only tool calls are accepted.")

    def _after(self, action: PricesAction, raw: Any) -> PricesObservation:
        error = getattr(raw, "error", None)
        error_text = str(error.message).strip().splitlines()[0] if error is not None else ""
        result = getattr(raw, "result", None)
        content = getattr(result, "content", None)
        result_text = content[0].text if content else ("" if result is None else str(result))
        self._history.append({"tool_name": action.tool_name, "arguments": dict(action.arguments),
                              "result": result_text, "error": error_text})
        self._state.step_count += 1
        reward = 0.0
        if self._submitted is not None:
            reward = score(self._submitted, self._task["answer"])
            self._done = True
        elif self._state.step_count >= MAX_STEPS:
            self._done = True
        return self._observation(reward=reward, tool_name=action.tool_name,
                                 result=result_text, error=error_text)

    def _over(self) -> PricesObservation:
        # Before `reset` or after the episode ended: no reward, nothing changes.
        text = "The episode is over: call reset()." if self._done else "Call reset() first."
        obs = self._observation(reward=0.0, error=text)
        obs.done = True
        return obs

    def _observation(self, reward: float, **fields: Any) -> PricesObservation:
        task = self._task or {"item": "", "currency": ""}
        question = (f"How much does one {task['item']} cost in {task['currency']}? Use the tools, "
                    f"then call submit_answer with the amount rounded to 2 decimals.")
        return PricesObservation(
            task=question if self._task else "",
            item=task["item"],
            currency=task["currency"],
            tools=self._tools,
            history=list(self._history),
            calls_left=0 if self._done else max(MAX_STEPS - self._state.step_count, 0),
            done=self._done,
            reward=reward,
            **fields,
        )

    @property
    def state(self) -> State:
        """`episode_id` and `step_count` of the current episode."""
        return self._state
