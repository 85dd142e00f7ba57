"""Which fields the determinism check leaves out (issue #13 item 3; repl_env's timings,
docs/realworld.md): measured timings are, episode content is not."""

from __future__ import annotations

from envkit.validation.engine import Episode
from envkit.validation.rules.determinism import compare, volatile_paths
from envkit.wire import StepResult


def _episode(*values: object, field: str, end_state: object = 0.0) -> Episode:
    """An episode whose observations carry ``metadata.<field>`` = ``values`` (reset first)."""
    ep = Episode(0, {"metadata": {field: values[0]}, "board": "x"})
    for v in values[1:]:
        ep.steps.append(StepResult({"metadata": {field: v}, "board": "x"}, 0.0, False))
        ep.actions.append({"a": 1})
    ep.states = {
        "reset": {"episode_id": "e", "step_count": 0, field: 0.0},
        "end": {"episode_id": "e", "step_count": 1, field: end_state},
    }
    return ep


def test_timing_floats_are_volatile_even_when_they_repeat_in_a_run() -> None:
    a = _episode(0.0, 0.00123, 0.0, field="execution_time", end_state=0.00123)
    b = _episode(0.0, 0.00097, 0.0, field="execution_time", end_state=0.00097)
    assert volatile_paths(a, b) == {"obs:metadata.execution_time", "state:execution_time"}
    assert compare(a, b, volatile_paths(a, b)) == []


def test_other_names_and_integer_timings_stay_reported() -> None:
    a = _episode(0.0, 0.25, 0.0, field="score", end_state=0.25)
    b = _episode(0.0, 0.5, 0.0, field="score", end_state=0.5)
    assert volatile_paths(a, b) == set()
    assert [d.path for d in compare(a, b)] == ["metadata.score", "state.score"]
    a = _episode(0, 3, 0, field="arrival_time", end_state=3)
    b = _episode(0, 4, 0, field="arrival_time", end_state=4)
    assert volatile_paths(a, b) == set()
    # a timing-named field turning into text is no timing noise
    a = _episode(0.0, 0.1, field="elapsed")
    b = _episode(0.0, "late", field="elapsed")
    assert "obs:metadata.elapsed" not in volatile_paths(a, b)


def test_done_at_a_step_is_compared() -> None:
    # same observations and rewards, but the first play ended at step 1 and the second not
    a = _episode(0.0, 0.0, field="score")
    b = _episode(0.0, 0.0, field="score")
    a.steps[0] = StepResult(a.steps[0].observation, 0.0, True)
    (d,) = compare(a, b)
    assert (d.where, d.path, d.first, d.second) == ("step 1", "done", True, False)


def test_durations_quoted_in_text_are_not_the_episode() -> None:
    # pytest's summary in the feedback: the same run, timed twice
    a = _episode("", "8 passed in 0.46s", field="feedback", end_state=0.0)
    b = _episode("", "8 passed in 0.33s", field="feedback", end_state=0.0)
    assert compare(a, b) == []
    # a different count beside the duration is the episode's content
    b = _episode("", "7 passed in 0.33s", field="feedback", end_state=0.0)
    assert [d.path for d in compare(a, b)] == ["metadata.feedback"]
    # an integer with a unit may be seeded content ("wait 3s"), so it still counts
    a = _episode("", "wait 3s", field="feedback", end_state=0.0)
    b = _episode("", "wait 5s", field="feedback", end_state=0.0)
    assert [d.path for d in compare(a, b)] == ["metadata.feedback"]
