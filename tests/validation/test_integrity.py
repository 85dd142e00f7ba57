"""EK509 solution leak (envkit.validation.rules.integrity): what an episode leaves readable,
and when a value the task shows may be its own answer, on plain episodes."""

from __future__ import annotations

from envkit.validation.engine import Episode
from envkit.validation.rules.integrity import LeakCandidate, copy_task, leak_candidates
from envkit.wire import StepResult


def _lost_guess_episode() -> Episode:
    ep = Episode(0, {"low": 1, "high": 100, "feedback": "Guess a number."}, policy="leak")
    ep.record(StepResult({"low": 2, "high": 100, "feedback": "Higher."}, 0.0, False), {"guess": 1})
    last = {"low": 2, "high": 100, "feedback": "Out of guesses: the number was 57."}
    ep.record(StepResult(last, 0.0, True), {"guess": 1})
    ep.states = {"reset": {"episode_id": "e", "step_count": 0}}
    return ep


def test_candidates_hidden_then_parts_of_texts_then_shown_values() -> None:
    got, hidden = leak_candidates(_lost_guess_episode())
    assert [c.where for c in hidden] == ["state.step_count", "observation.feedback"]
    (part,) = [c for c in got if c.text is not None]
    assert part.value == "57" and part.when == "terminal observation"
    shown = [c.value for c in got if c.shown]
    assert 100 in shown and "Higher." in shown and 1 not in shown  # 1 was sent
    assert got.index(part) < min(got.index(c) for c in got if c.shown)


def test_a_shown_value_is_the_answer_only_when_the_oracle_copies_it() -> None:
    target = LeakCandidate("observation.target", "after `reset`", "amber basil cedar", shown=True)
    assert copy_task(target, {"message": "amber basil cedar "}, "message")  # the echo task
    assert not copy_task(target, {"message": "amber basil"}, "message")
    countdown = LeakCandidate("observation.target", "after `reset`", 417, shown=True)
    assert not copy_task(countdown, {"expression": "17 * 24 + 9"}, "expression")
    assert copy_task(countdown, None, "expression")  # no oracle: the benefit of the doubt
    named = LeakCandidate("observation.solution", "after `reset`", "1,2,3", shown=True)
    assert not copy_task(named, {"answer": "1,2,3"}, "answer")  # named as the answer
    hidden = LeakCandidate("state.target", "after `reset`", "amber", shown=False)
    assert not copy_task(hidden, {"message": "amber"}, "message")
