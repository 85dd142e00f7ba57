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


def test_a_field_case_cut_short_by_time_is_timed_out_and_played_again_alone(
    monkeypatch, tmp_path
) -> None:
    """The field corpus judges the same way: a code grader running pytest on every step,
    played beside other cases on a busy machine, used to read "missed (got nothing)"."""
    from tests.corpus import field

    defect = next(c for c in field.field_cases() if c.kind == "defect" and c.code)
    nearmiss = next(c for c in field.field_cases() if c.kind == "nearmiss")
    cut = ("code hacks probe",)
    assert field.verdict(defect, field.Played({}, cut, tries=2)) == "timed out"
    assert field.verdict(defect, field.Played({"EK404": "error"}, cut)) == "timed out"
    assert field.verdict(nearmiss, field.Played({}, cut)) == "timed out"
    assert field.verdict(nearmiss, field.Played({"EK404": "error"}, cut)) == "timed out"
    assert field.verdict(defect, field.Played({})) == "missed"
    # a finding stands even when the schedule was cut short: no second play for it
    assert field.verdict(defect, field.Played({defect.code: "error"}, cut)) == "found"

    calls: list[tuple[str, float | None]] = []

    def play(case, workdir, python, timeout_s=None):
        calls.append((case.key, timeout_s))
        if case.key == defect.key and timeout_s is None:
            return field.Played({}, ("the runtime stage",))  # cut short: played again, alone
        return field.Played({defect.code: "error"} if case.kind == "defect" else {})

    monkeypatch.setattr(field, "play", play)
    got = {c.key: p for c, p, _s in field.play_all([defect, nearmiss], tmp_path, "python", 2)}
    assert calls[-1] == (defect.key, field.RETRY_TIMEOUT_S) and len(calls) == 3
    assert got[defect.key].tries == 2 and field.verdict(defect, got[defect.key]) == "found"
    assert got[nearmiss.key].tries == 1 and field.verdict(nearmiss, got[nearmiss.key]) == "quiet"
