"""How the corpus judges one play of a case: a schedule the time cut short is no verdict
("timed out"), never a miss; a neighbour's catch is counted apart from the rule's own."""

from __future__ import annotations

from tests.corpus.corpus import REPORTED_AS, Played, cases, verdict

CASES = {c.key: c for c in cases()}
DEFECT = CASES["code-grader-hackable/defect_tests_file_in_workdir"]
NEARMISS = CASES["code-grader-hackable/nearmiss_parent_compares_outputs"]
INSTEAD = CASES["answer-in-state/defect_state_expected_answer"]


def test_a_play_cut_short_by_time_is_timed_out_whatever_it_reported() -> None:
    cut = ("code hacks probe",)
    assert verdict(DEFECT, Played(frozenset(), cut, tries=2)) == "timed out"
    assert verdict(DEFECT, Played(frozenset({DEFECT.code}), cut, tries=2)) == "timed out"
    assert verdict(NEARMISS, Played(frozenset(), cut, tries=2)) == "timed out"


def test_a_whole_play_is_judged() -> None:
    assert verdict(DEFECT, Played(frozenset({DEFECT.code}))) == "found"
    assert verdict(DEFECT, Played(frozenset())) == "missed"
    assert verdict(NEARMISS, Played(frozenset())) == "quiet"
    assert verdict(NEARMISS, Played(frozenset({NEARMISS.code}))) == "noise"


def test_a_neighbours_catch_is_instead_not_found() -> None:
    neighbour = REPORTED_AS[INSTEAD.key][0][0]
    assert verdict(INSTEAD, Played(frozenset({neighbour}))) == "instead"
    assert verdict(INSTEAD, Played(frozenset({INSTEAD.code, neighbour}))) == "found"


def test_a_play_cut_short_is_played_again_with_a_larger_budget(monkeypatch, tmp_path) -> None:
    from tests.corpus import corpus

    budgets: list[float | None] = []

    def play(case, workdir, python, timeout_s=None):
        budgets.append(timeout_s)
        return Played(frozenset(), () if timeout_s else ("the runtime stage",))

    monkeypatch.setattr(corpus, "play", play)
    again = corpus.play_timed(DEFECT, tmp_path, "python")
    assert budgets == [None, corpus.RETRY_TIMEOUT_S] and again.tries == 2
    assert verdict(DEFECT, again) == "missed"  # judged on the whole second play
