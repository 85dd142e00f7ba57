"""The exploring policy of the runtime stage: reach the episode ends fuzzing does not.

The after-``done`` probes need an episode end to probe after.
Without an oracle, fuzzed actions rarely end a real episode: on huggingface/OpenEnv's
connect4_env, maze_env, grid_world_env and chess_env a random integer is not a column, a
random string is not a chess move, and 50 random moves do not cross a maze, so the episodes
that pay after ``done`` (or flip ``done`` back to false) were never finished and the defects
were missed (docs/realworld.md).

The explorer plays what the task says is playable, in this order:

1. **the legal actions the observation lists**: a list of numbers or strings under a key
   naming them (``legal_actions``, ``legal_moves``, ``valid_actions``, ``available_moves``,
   also inside the observation's ``metadata``; :data:`LEGAL_KEY`), put in the action field
   of that type;
2. **the values a field's schema enumerates**: an ``enum``/``Literal``, a boolean, an integer
   with ``minimum`` and ``maximum`` at most 64 apart;
3. otherwise **the fuzzed actions** (the first 16 distinct ones).

Among those it picks the action it has tried least often in an observation like this one
(the observation without ``metadata``), ties broken by a seeded random generator: a
count-based random walk, which crosses a maze in far fewer steps than a uniform one does,
and plays random legal games where every observation is new (chess). The same seed gives
the same actions against the same answers.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from envkit.validation import fuzz

if TYPE_CHECKING:
    from envkit.validation.engine import ActionPool

#: An observation key that names the actions allowed now (``legal_actions``, ``validMoves``):
#: a word saying "allowed" and a word saying "action". ``available_tools`` (repl_env's tool
#: names) is not a list of actions.
LEGAL_KEY = re.compile(
    r"(legal|valid|available|allowed|possible).?(actions?|moves?|choices?|options?|commands?|"
    r"columns?|plays?)$",
    re.IGNORECASE,
)
MAX_ENUMERATED = 64  # integer ranges enumerated at most (maximum - minimum + 1)
FUZZ_CHOICES = 16  # distinct fuzzed actions the explorer falls back to
MAX_LEGAL = 4096  # longest list of legal actions read from an observation
FUZZ_READ = 64  # fuzzed actions read from the pool for the fallback choices


def _scalar_kind(value: object) -> str | None:
    """``integer``, ``number`` or ``string`` for a JSON scalar an action field could hold."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


class ActionSpace:
    """What the explorer (and the after-``done`` probe) can send, read from the action
    schema (the ``/schema`` ``action`` JSON Schema).

    Args:
        schema: the action JSON Schema.
        base: a valid action (the first fuzzed one); fields the explorer does not choose are
            copied from it.
        fuzzed: the fuzzed actions (the fallback choices).
    """

    def __init__(
        self, schema: dict[str, Any], base: dict[str, Any] | None, fuzzed: list[dict[str, Any]]
    ):
        self.root = fuzz.action_schema(schema)
        props = self.root.get("properties")
        self.props: dict[str, dict[str, Any]] = {
            name: fuzz.resolve(sub, self.root)
            for name, sub in (props.items() if isinstance(props, dict) else [])
        }
        self.required = [r for r in self.root.get("required") or [] if r in self.props]
        self.base = dict(base or {})
        seen: set[str] = set()
        self.fuzzed: list[dict[str, Any]] = []
        for a in fuzzed:
            key = fuzz.json_key(a)
            if key not in seen and len(self.fuzzed) < FUZZ_CHOICES:
                seen.add(key)
                self.fuzzed.append(dict(a))
        self.enumerated = self._enumerated()

    @classmethod
    def from_pool(cls, schema: dict[str, Any], actions: ActionPool) -> ActionSpace:
        """The space of ``schema`` over the run's fuzzed actions: the first one is the base,
        the first :data:`FUZZ_READ` are the fallback choices. One space serves the explorer
        and the after-``done`` probe."""
        return cls(
            schema,
            actions.at(0) if actions else None,
            [actions.at(i) for i in range(min(len(actions), FUZZ_READ))],
        )

    # -- what the schema enumerates ----------------------------------------------------------
    def _values(self, node: dict[str, Any]) -> list[Any] | None:
        if isinstance(node.get("enum"), list) and node["enum"]:
            return list(node["enum"])
        if "const" in node:
            return [node["const"]]
        for key in ("anyOf", "oneOf"):
            options = node.get(key)
            if isinstance(options, list) and options:
                out: list[Any] = []
                for o in options:
                    values = self._values(fuzz.resolve(o, self.root))
                    if values is None:
                        return None
                    out += values
                return out
        types = fuzz.types_of(node)
        if types == ["boolean"]:
            return [False, True]
        if types == ["integer"]:
            lo, hi = node.get("minimum"), node.get("maximum")
            if isinstance(lo, int) and isinstance(hi, int) and 0 <= hi - lo < MAX_ENUMERATED:
                return list(range(lo, hi + 1))
        return None

    def _enumerated(self) -> list[dict[str, Any]]:
        """Every action built from the one required field whose values the schema
        enumerates (``[]`` when there is not exactly one such field to vary)."""
        fields = self.required or list(self.props)
        choices = {f: self._values(self.props[f]) for f in fields}
        varying = [f for f, v in choices.items() if v is not None]
        if len(varying) != 1 or any(choices[f] is None and f not in self.base for f in fields):
            return []
        name = varying[0]
        return [{**self.base, name: value} for value in choices[name] or []]

    # -- what the observation lists ----------------------------------------------------------
    def _field_for(self, key: str, kind: str) -> str | None:
        """The action field a list of ``kind`` values under ``key`` fills."""

        def fits(name: str) -> bool:
            node = self.props[name]
            types = fuzz.types_of(node)
            if isinstance(node.get("enum"), list):
                return True
            return kind in types or (kind == "integer" and "number" in types)

        fitting = [n for n in self.props if fits(n)]
        if not fitting:
            return None
        stem = key.lower()
        named = [n for n in fitting if n.lower().rstrip("s") in stem]
        required = [n for n in fitting if n in self.required]
        for group in (named, required, fitting):
            if len(group) == 1:
                return group[0]
        return None

    def legal(self, observation: object) -> list[dict[str, Any]]:
        """Actions built from the legal actions ``observation`` lists (``[]``: none listed).

        Args:
            observation: an observation as answered (a JSON object).
        """
        if not isinstance(observation, dict):
            return []
        places = [observation]
        if isinstance(observation.get("metadata"), dict):
            places.append(observation["metadata"])
        for place in places:
            for key, value in place.items():
                if not (
                    isinstance(key, str)
                    and LEGAL_KEY.search(key)
                    and isinstance(value, list)
                    and 0 < len(value) <= MAX_LEGAL
                ):
                    continue
                kinds = {_scalar_kind(v) for v in value}
                if len(kinds) != 1 or None in kinds:
                    continue
                name = self._field_for(key, kinds.pop())
                if name is not None:
                    return [{**self.base, name: v} for v in value]
        return []

    def choices(self, observation: object) -> list[dict[str, Any]]:
        """What the explorer chooses from in ``observation``: the listed legal actions,
        else the enumerated ones, else the fuzzed ones."""
        return self.legal(observation) or self.enumerated or self.fuzzed


class Explorer:
    """A count-based random policy (:data:`envkit.validation.engine.Policy`).

    Args:
        space: the :class:`ActionSpace`.
        seed: seed of the tie-breaking generator.
    """

    def __init__(self, space: ActionSpace, seed: int):
        self.space = space
        self.rng = random.Random(seed)
        self.tried: Counter[tuple[str, str]] = Counter()

    def __call__(self, observation: dict[str, Any], _step: int) -> dict[str, Any]:
        choices = self.space.choices(observation)
        if not choices:
            return dict(self.space.base)
        where = fuzz.json_key(
            {k: v for k, v in observation.items() if k != "metadata"}
            if isinstance(observation, dict)
            else observation
        )
        counts = [self.tried[(where, fuzz.json_key(a))] for a in choices]
        least = min(counts)
        pick = self.rng.choice([a for a, c in zip(choices, counts, strict=True) if c == least])
        self.tried[(where, fuzz.json_key(pick))] += 1
        return dict(pick)
