"""EK520's comparison (envkit.validation.rules.reset_options): the traces of one seed played
with each value of an option differ once the fields echoing the value are left out."""

from __future__ import annotations

from envkit.validation.rules.reset_options import differ, leaves, option_kwargs


def test_an_option_passed_as_a_keyword_or_as_a_key_of_a_dict_option() -> None:
    assert option_kwargs("level", "hard") == {"level": "hard"}
    assert option_kwargs("options.task_id", "w3") == {"options": {"task_id": "w3"}}


def test_leaves_keep_the_type_of_each_value() -> None:
    assert leaves([{"a": 1, "b": [1.0, True]}]) == {
        ".0.a": "1",
        ".0.b.0": "1.0",
        ".0.b.1": "true",
    }


def test_a_field_that_only_echoes_the_value_is_left_out() -> None:
    def trace(index: int, question: str) -> list[object]:
        return [{"index": index, "question": question, "step": 1}, [{"ok": False}, 0.0, True]]

    assert not differ([(0, trace(0, "2+2")), (1, trace(1, "2+2"))])  # only the echo changed
    assert differ([(0, trace(0, "2+2")), (1, trace(1, "3+5"))])  # the task changed
    # a value that is the seed's task on one trace only is not an echo: it is compared
    assert differ([(1, trace(0, "2+2")), (2, trace(0, "3+5"))])
    assert not differ([("w3", [{"task": "w3"}]), ("w0", [{"task": "w3"}])])


def test_a_later_step_that_differs_is_a_difference() -> None:
    first = {"range": [1, 100]}
    assert differ(
        [
            (3, [first, [{}, 0.0, False], [{}, 0.0, True]]),
            (8, [first, [{}, 0.0, False], [{}, 0.0, False]]),
        ]
    )
