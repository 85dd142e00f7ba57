"""The knobs environment: guess a word drawn from the seed; clean unless a mode says otherwise.

Mode: see models.mode(). Each mode is one misbehaviour for one runtime rule.
"""

import math
import os
import random
import time
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import KnobsAction, KnobsObservation, mode

MAX_STEPS = 4
WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor")
_SHARED = {"target": ""}  # module-level state, used only by mode "interfere"


class KnobsEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target = ""
        self._count = 0
        self._done = False
        self._seed: Optional[int] = None
        self._instance_rng = random.Random(1234)  # mode "seed_ignored": one per instance

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> KnobsObservation:
        m = mode()
        if m == "reset_fails":
            raise FileNotFoundError("words.txt is missing from the image")
        rng = random.Random() if m == "reset_random" else random.Random(seed)
        # seed_ignored: every new session starts with the same word whatever the seed, and
        # the next reset of that session draws another (randomness the seed does not control)
        self._target = (self._instance_rng if m == "seed_ignored" else rng).choice(WORDS)
        self._seed = seed
        if m == "interfere":
            _SHARED["target"] = self._target
        self._count = 0
        self._done = False
        eid = str(uuid4()) if m == "episode_id_ignored" else (episode_id or str(uuid4()))
        self._state = State(episode_id=eid, step_count=0)
        if m == "timed":
            self._state.total_execution_time = 0.0
            return KnobsObservation(target=self._target, done=False, reward=0.0,
                                    metadata={"execution_time": 0.0})
        return KnobsObservation(target=self._target, done=False, reward=0.0)

    def step(self, action: KnobsAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> KnobsObservation:
        m = mode()
        self._t0 = time.perf_counter()
        if m == "hang":
            time.sleep(3600)
        if m == "crash":
            os._exit(3)
        if m == "slow":
            time.sleep(0.1)
        if not self._target:
            if m == "step_before_reset_crash":
                raise AttributeError("'KnobsEnvironment' has no target: call reset first")
            if m == "reset_first":  # a deliberate guard, like huggingface/OpenEnv's repl_env
                raise RuntimeError("Environment not initialized. Call reset() first.")
            return KnobsObservation(done=True, reward=0.0, echoed=action.message)
        if self._done:
            if m == "step_after_done":
                return KnobsObservation(target=self._target, count=self._count, done=False,
                                        reward=0.3)
            return KnobsObservation(target=self._target, count=self._count, done=True,
                                    reward=0.0)
        if m == "raise_long" and len(action.message) >= 3:
            raise ValueError(f"cannot parse {action.message!r}")
        self._count += 1
        if m != "step_count_wrong":
            self._state.step_count += 1
        target = _SHARED["target"] if m == "interfere" else self._target
        reward: Any = 1.0 if action.message == target else round(min(len(action.message), 9) / 20, 3)
        if m == "nan_reward":
            reward = math.nan
        elif m == "bool_reward":
            reward = True
        elif m == "out_of_range":
            reward -= 1.0
        elif m == "constant":
            reward = 0.5
        elif m == "hackable" and action.message == "":
            reward = 1.0
        elif m == "lucky" and action.message == "" and self._seed == 0:
            reward = 1.0  # clean look-alike: one lucky seed is no reward hack
        elif m == "reward_ignores_action":
            reward = round(self._count / 10, 3)
        elif m == "reward_random" and reward < 1.0:
            reward += random.random() * 0.01
        self._done = action.message == target or self._count >= MAX_STEPS
        done = False if m == "never_done" else self._done
        if m == "obs_mismatch":
            return KnobsObservation.model_construct(target=target, count="three", echoed="",
                                                    done=done, reward=reward, metadata={})
        if m == "timed":  # clean look-alike: timings like huggingface/OpenEnv's repl_env
            took = time.perf_counter() - self._t0
            self._state.total_execution_time += took  # 0.0 after reset, then a sum
            return KnobsObservation(target=target, count=self._count, echoed=action.message,
                                    done=done, reward=reward,
                                    metadata={"execution_time": 0.0 if done else took})
        return KnobsObservation(target=target, count=self._count, echoed=action.message,
                                done=done, reward=reward)

    @property
    def state(self) -> State:
        if mode() == "reset_first" and not self._target:
            raise RuntimeError("Environment not initialized. Call reset() first.")
        return self._state
