"""What an environment offers an agent to act with: the action shapes every policy envkit
plays draws from.

The ``/schema`` action alone is not enough when the action is a tool call: its ``arguments``
are a free object there, and each tool's input schema is listed elsewhere (an observation
field, or MCP ``tools/list``). :func:`discover` reads the tool list once and gives the run one
action schema whose tool calls carry arguments of the right shape
(:func:`envkit.blind.shapes.refine`); the protocol checks keep the ``/schema`` action, which
is what the server validates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envkit.blind import shapes
from envkit.errors import WireError
from envkit.validation.engine import ServerPlayer
from envkit.wire import EnvErrorFrame


@dataclass(frozen=True)
class Offered:
    """The action shapes of one environment.

    Attributes:
        wire: the ``/schema`` action JSON Schema (what the server validates).
        play: the schema policies draw from: ``wire`` with each tool's input schema in place
            of the free ``arguments`` (one ``anyOf`` branch per tool), else ``wire``.
        tools: the tools offered (``[]``: none found, or the action is not a tool call).
        call: how the action spells a tool call (``None``: it does not).
        source: where the tool list came from (``"observation"``, ``"tools/list"``, ``""``).
    """

    wire: dict[str, Any]
    play: dict[str, Any]
    tools: list[shapes.Tool] = field(default_factory=list)
    call: shapes.CallShape | None = None
    source: str = ""

    def describe(self) -> str:
        """One line for the report's notes (``""`` when there are no tools)."""
        if not self.tools:
            return ""
        names = ", ".join(t.name for t in self.tools[:8])
        more = f" and {len(self.tools) - 8} more" if len(self.tools) > 8 else ""
        return (
            f"tool calls played with arguments from each tool's input schema "
            f"({self.source}: {names}{more})"
        )


def discover(engine: ServerPlayer, wire: dict[str, Any], listed: list[Any] | None) -> Offered:
    """The environment's action shapes: the tools its reset observation lists (one reset of
    the first declared seed on a session of its own), else those ``tools/list`` listed
    (``listed``, from :func:`envkit.validation.rules.mcp.check`).

    Never raises for the environment's faults: a ``reset`` that fails leaves the tools to
    ``tools/list`` (the round-trip check reports the failure).
    """
    call = shapes.call_shape(wire)
    if call is None:
        return Offered(wire, wire)
    tools: list[shapes.Tool] = []
    source = ""
    try:
        s = engine.open()
        try:
            first = engine.reset(s, engine.settings.seeds[0])
            tools = shapes.tools_from_observation(first.observation)
            source = "the reset observation"
        finally:
            s.close()
    except (EnvErrorFrame, WireError):
        tools = []
    if not tools and listed:
        tools, source = shapes.tools_from_list(listed), "tools/list"
    play = shapes.refine(wire, tools) if tools else None
    if play is None:
        return Offered(wire, wire, call=call)
    offered = Offered(wire, play, tools, call, source)
    engine.notes.append(offered.describe())
    return offered
