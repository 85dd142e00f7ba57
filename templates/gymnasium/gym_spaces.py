"""Gymnasium spaces -> JSON-Schema'd pydantic field types, and values back to the env.

Supported: Discrete, Box, MultiDiscrete, MultiBinary. Each maps to a type whose JSON Schema
states the bounds an agent may use (`minimum`/`maximum`, item counts), so `/schema`,
TRL and `envkit validate` all see the real action space. Add a branch for other spaces here.
"""

import math
from typing import Annotated, Any, List, Tuple

import numpy as np
from gymnasium import spaces
from pydantic import Field

MAX_TUPLE_ITEMS = 64  # above this, per-item bounds are dropped from the schema


def _bound(value: Any) -> Any:
    value = float(value)
    return value if math.isfinite(value) else None


def _number(kind: type, low: Any, high: Any) -> Any:
    """`kind` with JSON-Schema `minimum`/`maximum` when the bounds are finite."""
    lo, hi = _bound(low), _bound(high)
    if kind is int:
        lo, hi = (None if lo is None else int(lo)), (None if hi is None else int(hi))
    return Annotated[kind, Field(ge=lo, le=hi, allow_inf_nan=False)] if kind is float else \
        Annotated[kind, Field(ge=lo, le=hi)]


def _items(item_types: List[Any], same: bool) -> Any:
    n = len(item_types)
    if same or n > MAX_TUPLE_ITEMS:
        return Annotated[List[item_types[0]], Field(min_length=n, max_length=n)]
    return Tuple[tuple(item_types)]


def field_type(space: spaces.Space, bounded: bool = True) -> Any:
    """The pydantic type for values of `space` (flattened to a list for array spaces).

    Args:
        space: a Gymnasium space.
        bounded: put the space's bounds into the schema (actions); observations are left
            unbounded because some environments emit values outside their declared box.

    Raises:
        TypeError: the space type is not supported yet.
    """
    if isinstance(space, spaces.Discrete):
        start = int(space.start)
        return _number(int, start, start + int(space.n) - 1) if bounded else int
    if isinstance(space, spaces.Box):
        kind = int if np.issubdtype(space.dtype, np.integer) else float
        low, high = space.low.flatten(), space.high.flatten()
        if not bounded:
            return Annotated[List[kind], Field(min_length=low.size, max_length=low.size)]
        types = [_number(kind, lo, hi) for lo, hi in zip(low, high)]
        return _items(types, same=bool((low == low[0]).all() and (high == high[0]).all()))
    if isinstance(space, spaces.MultiDiscrete):
        starts, nvec = np.asarray(space.start).flatten(), np.asarray(space.nvec).flatten()
        types = [_number(int, s, s + n - 1) if bounded else int for s, n in zip(starts, nvec)]
        return _items(types, same=bool((starts == starts[0]).all() and (nvec == nvec[0]).all()))
    if isinstance(space, spaces.MultiBinary):
        n = int(np.prod(space.n))
        return Annotated[List[_number(int, 0, 1) if bounded else int],
                         Field(min_length=n, max_length=n)]
    raise TypeError(f"{type(space).__name__} spaces are not supported yet: add a branch to "
                    "field_type() and to_env() in spaces.py.")


def describe(space: spaces.Space) -> str:
    """One line for field descriptions and the text rendering."""
    if isinstance(space, spaces.Discrete):
        return f"integer {space.start}..{space.start + space.n - 1}"
    if isinstance(space, spaces.Box):
        return f"{space.low.size} numbers in [{space.low.min():g}, {space.high.max():g}]"
    if isinstance(space, spaces.MultiDiscrete):
        return f"{space.nvec.size} integers, the i-th in 0..nvec[i]-1 (nvec={space.nvec.tolist()})"
    if isinstance(space, spaces.MultiBinary):
        return f"{int(np.prod(space.n))} bits (0 or 1)"
    return type(space).__name__


def to_env(space: spaces.Space, value: Any) -> Any:
    """An action value from the wire (int or list) as the environment expects it."""
    if isinstance(space, spaces.Discrete):
        return int(value)
    shape = space.shape
    return np.asarray(value, dtype=space.dtype).reshape(shape)


def to_wire(space: spaces.Space, value: Any) -> Any:
    """An observation from the environment as JSON-friendly Python (int or flat list)."""
    if isinstance(space, spaces.Discrete):
        return int(value)
    return [v.item() for v in np.asarray(value).flatten()]
