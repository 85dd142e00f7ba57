"""Action and observation of the Prices environment (MCP tool calling).

The action is one MCP tool call, `{"tool_name": ..., "arguments": {...}}`, with the tool
names in the JSON Schema so agents (and `envkit validate`) see which tools exist. It has no
`type` field: OpenEnv (seen on 0.3.0) answers a non-string `type` with a 500 before validation
(its MCP routing hashes the value). Both models forbid unknown fields.
"""

from typing import Any, Dict, List, Literal

from pydantic import Field

from openenv.core.env_server.types import Action, Observation

ToolName = Literal["get_price", "get_exchange_rate", "submit_answer"]


class PricesAction(Action):
    """One MCP tool call: `tool_name` and its `arguments` (see the tools in the observation)."""

    tool_name: ToolName = Field(..., description="Tool to call.")
    arguments: Dict[str, Any] = Field(default_factory=dict,
                                      description="Keyword arguments of the tool.")


class PricesObservation(Observation):
    """What the agent sees after `reset` and after every tool call.

    `reward` (in [0, 1]) and `done` are inherited from `Observation` and travel at the top
    level of the wire frame. Tool errors (unknown item, bad arguments) arrive in `error`:
    they are observations, never crashes.
    """

    task: str = Field(default="", description="What to find out.")
    item: str = Field(default="", description="The item the task asks about.")
    currency: str = Field(default="", description="The currency the answer must be in.")
    tools: List[Dict[str, Any]] = Field(default_factory=list,
                                        description="Available tools: name, description, input_schema.")
    tool_name: str = Field(default="", description="The tool just called.")
    result: str = Field(default="", description="The tool's result, as text.")
    error: str = Field(default="", description="The tool's error, if it failed.")
    history: List[Dict[str, Any]] = Field(default_factory=list,
                                          description="Every call so far: tool_name, arguments, result, error.")
    calls_left: int = Field(default=0, ge=0, description="Tool calls left in this episode.")
