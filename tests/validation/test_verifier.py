"""EK514-EK516, what the verifier pays besides a right answer
(envkit.validation.rules.verifier): the harmless variations and the error fields read, on plain
values."""

from __future__ import annotations

from envkit.validation.rules import verifier


def test_harmless_variations_of_an_answer() -> None:
    got = dict(verifier.variations("<answer>Paris</answer>"))
    assert got["surrounding whitespace"] == "  <answer>Paris</answer>\n"
    assert got["a lead-in"] == "The answer is <answer>Paris</answer>"
    assert got["upper case"] == "<answer>PARIS</answer>"  # the tag itself is kept
    assert dict(verifier.variations("4.50"))["an equivalent number form"] == "4.5"
    assert dict(verifier.variations("42"))["an equivalent number form"] == "42.0"
    assert "upper case" not in dict(verifier.variations("42"))  # digits have no case


def test_error_text_reads_error_fields_only() -> None:
    assert verifier._error_text({"error": "unknown tool"}) == "error: unknown tool"
    assert verifier._error_text({"metadata": {"last_action_error": "bad"}}) == (
        "last_action_error: bad"
    )
    assert verifier._error_text({"error": "", "terror": "x", "error_rate": 0.3}) is None


def test_errors_reported_by_a_status_or_a_feedback_text() -> None:
    assert verifier._error_text({"status": "invalid", "message": "use A-D"}) == "status: invalid"
    assert verifier._error_text({"feedback": "Error: could not parse 'x'."}) == (
        "feedback: Error: could not parse 'x'."
    )
    traceback = "Traceback (most recent call last):\n  File 'a.py'\nSyntaxError: bad"
    assert verifier._error_text({"feedback": traceback}).startswith("feedback: Traceback")
    assert verifier._error_text({"feedback": "Off by 3.", "status": "wrong"}) is None
    assert verifier._error_text({"question": "Error: x"}) is None  # not a feedback field


def test_an_error_shown_at_reset_is_the_task_not_a_failed_step() -> None:
    task = {"error": "ZeroDivisionError: division by zero", "feedback": "Which line?"}
    assert verifier._error_text({**task, "feedback": "Correct."}, task) is None
    assert verifier._error_text({**task, "feedback": "Invalid line 'x'."}, task) == (
        "feedback: Invalid line 'x'."
    )
