"""Typed records of an evaluation run: its settings, each episode and each step.

The JSON they serialise to (:meth:`EpisodeRecord.to_json`, :meth:`EvalSettings.to_json`) is the
shape of ``trajectories.jsonl`` lines and of ``summary.json``'s ``settings``, which other
tools read (``envkit label``): field names never change; optional episode fields (``lost``,
``retries``) and step fields (``reply``,
``usage``, ``error``, ``error_code``, ``parse_error``) are written only when set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir.project import Timeouts

# The error of an episode whose session was lost; runs written before episodes were marked
# ``lost`` are recognised by it.
SESSION_LOST = "session lost"


@dataclass
class EvalSettings:
    """What :func:`envkit.evaluation.evaluate` was asked to do (see its arguments).

    Attributes:
        timeouts: the run's time limits, resolved once (:func:`envkit.envdir.project.resolve_timeouts`).
        python: the environment's interpreter, resolved once
            (:func:`envkit.envdir.project.resolve_python`); ``None`` with ``--url`` and a policy
            that runs in envkit's process.
    """

    policy: str
    model: str | None
    base_url: str | None
    api_key_env: str | None
    episodes: int
    group_size: int
    concurrency: int
    max_steps: int
    temperature: float
    seed: int
    out_dir: Path | None
    system_prompt: str | None
    max_tokens: int | None
    max_retries: int
    timeouts: Timeouts
    python: str | None = None
    session_retries: int = 2

    @property
    def total(self) -> int:
        """Episodes planned: ``episodes * group_size``."""
        return self.episodes * self.group_size

    def tasks(self) -> list[tuple[int, int, int, int]]:
        """``(episode, group, member, seed)`` of every planned episode, in order."""
        return [
            (g * self.group_size + m, g, m, self.seed + g)
            for g in range(self.episodes)
            for m in range(self.group_size)
        ]

    def to_json(
        self, *, concurrency_used: int, system_prompt_text: str | None = None
    ) -> dict[str, Any]:
        """``summary.json``'s ``settings`` (same keys as before the records were typed, plus
        ``system_prompt_text``: the system message the ``openai`` policy sent, so a
        preference export can start its prompts with it)."""
        openai = self.policy == "openai"
        return {
            "groups_planned": self.episodes,
            "group_size": self.group_size,
            "episodes_planned": self.total,
            "seed": self.seed,
            "seeds": [self.seed + g for g in range(self.episodes)],
            "max_steps": self.max_steps,
            "temperature": self.temperature if openai else None,
            "max_tokens": self.max_tokens,
            "max_retries": self.max_retries if openai else None,
            "concurrency_requested": self.concurrency,
            "concurrency": concurrency_used,
            "system_prompt": (
                "custom" if self.system_prompt is not None else "derived from /schema"
            )
            if openai
            else None,
            "system_prompt_text": system_prompt_text if openai else None,
            "timeout_s": self.timeouts.budget_s,
            "startup_timeout_s": self.timeouts.startup_s,
            "reply_timeout_s": self.timeouts.reply_s,
            "session_retries": self.session_retries,
        }


@dataclass
class StepRecord:
    """One step of an episode.

    Attributes:
        step: 1-based index in the episode.
        action: the action sent, or ``None`` (the reply could not be parsed, or the policy
            failed).
        observation, reward, done: the environment's answer (``None``/``0.0``/``False`` when
            no step was sent or it failed).
        latency_s: seconds from sending the step frame to its answer, or ``None``.
        policy_latency_s: seconds the policy took to choose the action.
        reply, usage: the model's raw reply and token usage (``openai`` policy).
        error, error_code: why the step failed (``VALIDATION_ERROR``, ``POLICY_ERROR``, ...).
        parse_error: the reply was not an action.
    """

    step: int
    action: dict[str, Any] | None
    policy_latency_s: float | None = None
    reply: str | None = None
    usage: dict[str, int] | None = None
    observation: dict[str, Any] | None = None
    reward: Any = 0.0
    done: bool = False
    latency_s: float | None = None
    error: str | None = None
    error_code: str | None = None
    parse_error: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "step": self.step,
            "action": self.action,
            "policy_latency_s": self.policy_latency_s,
        }
        if self.reply is not None:
            out["reply"] = self.reply
        if self.usage:
            out["usage"] = self.usage
        out.update(
            observation=self.observation,
            reward=self.reward,
            done=self.done,
            latency_s=self.latency_s,
        )
        if self.error is not None:
            out["error"] = self.error
        if self.error_code is not None:
            out["error_code"] = self.error_code
        if self.parse_error:
            out["parse_error"] = True
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepRecord:
        """The step :meth:`to_json` wrote (a ``trajectories.jsonl`` step object).

        Raises:
            KeyError, TypeError: ``data`` is not such an object.
        """
        return cls(
            step=int(data["step"]),
            action=data["action"],
            policy_latency_s=data.get("policy_latency_s"),
            reply=data.get("reply"),
            usage=data.get("usage"),
            observation=data.get("observation"),
            reward=data.get("reward"),
            done=bool(data.get("done", False)),
            latency_s=data.get("latency_s"),
            error=data.get("error"),
            error_code=data.get("error_code"),
            parse_error=bool(data.get("parse_error", False)),
        )


@dataclass
class EpisodeRecord:
    """One episode: a line of ``trajectories.jsonl``.

    Attributes:
        episode: run-wide index; group: seed index; member: rollout index in the group.
        seed: the reset seed.
        reset: ``{"observation", "reward", "done", "latency_s"}`` of the reset answer, or
            ``None`` when reset failed.
        steps: the steps played.
        error: why the episode ended early (environment, policy or session failure).
        lost: its session was lost (also after the retries on fresh sessions): it is not a
            result, so the statistics leave it out and ``--resume`` plays it again; written
            as ``"lost": true`` only when set.
        retries: how many times the episode was played again from reset on a fresh session
            after its session was lost (0: played once). A finished episode with retries is
            a complete result of its last play; written as ``"retries": N`` only when > 0.
        return_: the sum of finite step rewards (``return`` in JSON).
        max_reward: the highest finite step reward, or ``None``.
        success: a step reward reached the manifest's maximum.
        done: the environment ended the episode.
        truncated: cut off at ``max_steps`` (not done, no error).
        duration_s: seconds the episode took.
    """

    episode: int
    group: int
    member: int
    seed: int
    reset: dict[str, Any] | None = None
    steps: list[StepRecord] = field(default_factory=list)
    error: str | None = None
    return_: float = 0.0
    max_reward: float | None = None
    success: bool = False
    done: bool = False
    truncated: bool = False
    duration_s: float = 0.0
    lost: bool = False
    retries: int = 0

    @property
    def steps_taken(self) -> int:
        return len(self.steps)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "episode": self.episode,
            "group": self.group,
            "member": self.member,
            "seed": self.seed,
            "reset": self.reset,
            "steps": [s.to_json() for s in self.steps],
            "error": self.error,
            "return": self.return_,
            "max_reward": self.max_reward,
            "success": self.success,
            "done": self.done,
            "truncated": self.truncated,
            "steps_taken": self.steps_taken,
            "duration_s": self.duration_s,
        }
        if self.lost:
            out["lost"] = True
        if self.retries:
            out["retries"] = self.retries
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EpisodeRecord:
        """The episode :meth:`to_json` wrote (a line of ``trajectories.jsonl``), so that a
        resumed run summarises the episodes an earlier process finished.

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not such a record (a line cut short
                by a killed process parses as JSON only by accident, and then lacks keys).
        """
        if not isinstance(data.get("steps"), list):
            raise TypeError("`steps` is not a list")
        return cls(
            episode=int(data["episode"]),
            group=int(data["group"]),
            member=int(data["member"]),
            seed=int(data["seed"]),
            reset=data["reset"],
            steps=[StepRecord.from_json(s) for s in data["steps"]],
            error=data["error"],
            return_=float(data["return"]),
            max_reward=data["max_reward"],
            success=bool(data["success"]),
            done=bool(data["done"]),
            truncated=bool(data["truncated"]),
            duration_s=float(data["duration_s"]),
            lost=bool(data.get("lost")) or str(data["error"] or "").startswith(SESSION_LOST),
            retries=int(data.get("retries") or 0),
        )
