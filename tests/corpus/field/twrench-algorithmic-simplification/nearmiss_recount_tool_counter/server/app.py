"""Inventory audit with tools: look up / recount a SKU's stock, then submit the count.
Reward at submit: 0.7 for the right quantity + 0.1 per recount of the target SKU (max 3); a wrong quantity scores 0."""
import random
import re
from typing import Any, Dict, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SKUS = ["BOLT-M6", "NUT-M8", "WASHER-10", "HINGE-40", "BRACKET-L", "SCREW-4X30", "RIVET-5", "CLAMP-20"]
MAX_STEPS = 6
TOOLS = [
    {"name": "lookup", "description": "Read the inventory record of a SKU.",
     "input_schema": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}},
    {"name": "recount", "description": "Physically recount a SKU's bin (audit protocol: recount 3 times before submitting).",
     "input_schema": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}},
    {"name": "submit", "description": "Submit the audited quantity; ends the episode.",
     "input_schema": {"type": "object", "properties": {"quantity": {"type": "integer"}}, "required": ["quantity"]}},
]


class ToolAction(Action):
    tool_name: str = ""
    arguments: Dict[str, Any] = {}


class AuditObservation(Observation):
    task: str = ""
    tools: List[Dict[str, Any]] = TOOLS
    result: str = ""
    step: int = 0


class InventoryAuditEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target: Optional[str] = None
        self._stock: Dict[str, int] = {}
        self._recounts = 0
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> AuditObservation:
        rng = random.Random(seed)
        self._stock = {s: rng.randint(15, 400) for s in SKUS}
        self._target = rng.choice(SKUS)
        self._recounts = 0
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return AuditObservation(task=self._task(), result="ready")

    def _task(self) -> str:
        return f"Audit the stock of SKU {self._target} and submit the quantity."

    def _process_credit(self) -> float:
        return 0.1 * min(self._recounts, 3)

    def _obs(self, result: str, reward: float = 0.0) -> AuditObservation:
        done = self._done or self._state.step_count >= MAX_STEPS
        self._done = done
        return AuditObservation(task=self._task(), result=result, step=self._state.step_count,
                                done=done, reward=reward)

    def step(self, action: ToolAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> AuditObservation:
        if self._target is None or self._done:
            return AuditObservation(result="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        args = action.arguments or {}
        sku = str(args.get("sku", ""))
        if action.tool_name in ("lookup", "recount"):
            if action.tool_name == "recount" and sku == self._target:
                self._recounts += 1
            if sku not in self._stock:
                return self._obs(f"unknown sku {sku!r}")
            return self._obs(f"{action.tool_name}: sku {sku} qty {self._stock[sku]}")
        if action.tool_name == "submit":
            self._done = True
            try:
                correct = int(args.get("quantity")) == self._stock[self._target]
            except (TypeError, ValueError):
                correct = False
            r = round(min(1.0, 0.7 + self._process_credit()), 4) if correct else 0.0
            return self._obs(f"submitted; score {r}", r)
        return self._obs(f"unknown tool {action.tool_name!r}")

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """The oracle: recount the target SKU three times, then submit the counted quantity."""
    sku = observation["task"].split("SKU ")[1].split()[0]
    if observation.get("step", 0) < 3:
        return {"tool_name": "recount", "arguments": {"sku": sku}}
    qty = int(re.search(r"qty (\d+)", observation["result"]).group(1))
    return {"tool_name": "submit", "arguments": {"quantity": qty}}


app = create_app(InventoryAuditEnv, ToolAction, AuditObservation, env_name="inventory_audit",
                 max_concurrent_envs=8)
