"""What a sentence gives away (envkit.validation.reveal), on plain texts."""

from __future__ import annotations

from envkit.validation.reveal import text_parts


def test_text_parts_find_the_number_and_the_word_inside_a_sentence() -> None:
    assert text_parts("Out of guesses: the number was 57.") == ["57"]
    assert "583" in text_parts("Wrong: expected 583, got 580.")
    assert "CRANE" in text_parts("You lost. The word was CRANE.")
    assert "abc" in text_parts("Expected output: 'abc'; got 4.5")
    assert text_parts("Incorrect.") == []
