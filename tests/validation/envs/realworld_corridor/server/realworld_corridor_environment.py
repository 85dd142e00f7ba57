"""The realworld_corridor test environment: walk right along a corridor to the goal.

Like grid_world_env and maze_env (docs/realworld.md): moves are words the observation lists in
`legal_moves`, so fuzzed strings never move and no fuzzed or degenerate episode reaches the
goal; they end by the step limit (handled correctly). No oracle is declared. Only a policy that
plays the listed legal moves reaches the goal, and once there the episode keeps paying.
"""

from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import CorridorAction, CorridorObservation

GOAL = 5
MAX_STEPS = 30


class CorridorEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = False

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._position: Optional[int] = None
        self._truncated = False

    def _observe(self, feedback: str, reward: float, done: bool) -> CorridorObservation:
        pos = self._position or 0
        legal = [] if done else (["right"] if pos == 0 else ["left", "right"])
        return CorridorObservation(position=pos, legal_moves=legal, feedback=feedback,
                                   done=done, reward=reward)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CorridorObservation:
        self._position = 0
        self._truncated = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._observe("walk to cell 5", 0.0, False)

    def step(self, action: CorridorAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> CorridorObservation:
        if self._position is None:
            return CorridorObservation(feedback="call reset() first", done=True, reward=0.0)
        if self._truncated:
            return self._observe("the episode is over", 0.0, True)
        if self._position == GOAL:
            # DEFECT: the goal check comes before any "episode over" check, so every step
            # after reaching the goal pays the full reward again (reward farming after done).
            return self._observe("at the goal", 1.0, True)
        self._state.step_count += 1
        if action.move == "right":
            self._position += 1
        elif action.move == "left" and self._position > 0:
            self._position -= 1
        if self._position == GOAL:
            return self._observe("reached the goal", 1.0, True)
        self._truncated = self._state.step_count >= MAX_STEPS
        return self._observe("moved" if action.move in ("left", "right") else "not a move",
                             0.0, self._truncated)

    @property
    def state(self) -> State:
        return self._state
