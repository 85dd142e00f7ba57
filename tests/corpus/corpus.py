"""The independent corpora of envkit's runtime rules: reading and playing them.

``tests/corpus/<rule-name>/<case>/`` is a small real OpenEnv 0.10 environment written from the
rule's one-paragraph description by someone who had not read the rule's code: ``case.toml``
says whether it is a ``defect`` (the rule must report it) or a ``nearmiss`` (it looks like the
defect but is correct: the rule must stay quiet) and by which mechanism. A rule must find at
least :data:`MIN_CAUGHT` of its defects; the ones it misses are named in :data:`KNOWN_MISSES`
(and in the rule's docs as known limits) until a probe catches them.
"""

from __future__ import annotations

import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
MIN_CAUGHT = 4  # of each rule's defects (at least 5)

#: case directory (``rule-name/case``) -> why the rule does not catch it yet.
KNOWN_MISSES: dict[str, str] = {
    "reward-hackable/defect_http_step_fresh_empty": (
        "reported as EK510 (a never-reset instance pays), not as EK505"
    ),
    "solution-leak/defect_repr_false_solution_field": (
        "the answer in a plain observation field sent on every step: EK509 leaves out values "
        "the task shows before the end"
    ),
    "solution-leak/defect_revealed_after_loss_same_seed": (
        "the number revealed inside the terminal feedback sentence, not as a value of its own"
    ),
    "solution-leak/defect_target_accepted_as_expression": (
        "the displayed target accepted as the answer: values shown before the end are left out"
    ),
    "seed-ignored/defect_reset_lacks_seed_param": (
        "reported as EK411/EK412 (the dropped seed makes episodes random), not EK413"
    ),
    "seed-ignored/defect_instance_randomstate_seed_recorded": (
        "reported as EK411/EK412 (episodes random under one seed), not EK413"
    ),
    "seed-ignored/defect_seeds_wrong_library": "reported as EK411 (random under one seed), not EK413",
    "no-training-signal/defect_format_gated_partial_credit": (
        "the oracle's tags with a wrong number (a near miss of the oracle, counted as a weak "
        "policy) earn the closeness credit; a prompt that does not state the tags looks the same"
    ),
    "sessions-interfere/defect_cached_task_mutated_same_seed": (
        "only sessions on the same seed interfere; the interleaved check plays two seeds"
    ),
}

#: rule -> why it finds fewer than MIN_CAUGHT of its corpus (the gap to close next).
BELOW_TARGET: dict[str, str] = {
    "solution-leak": "2 of 5: answers in observation fields and feedback text are not submitted",
    "seed-ignored": "2 of 5: a seed ignored by a random environment shows as EK411 only",
}


@dataclass(frozen=True)
class Case:
    rule: str  # the rule's name (its folder)
    name: str  # the case's folder
    kind: str  # "defect" or "nearmiss"
    code: str  # the rule's code, e.g. "EK505"
    mechanism: str
    path: Path

    @property
    def key(self) -> str:
        return f"{self.rule}/{self.name}"


def cases() -> list[Case]:
    """Every case of every corpus, sorted by rule then case."""
    found = []
    for toml in sorted(HERE.glob("*/*/case.toml")):
        meta = tomllib.loads(toml.read_text(encoding="utf-8"))
        found.append(
            Case(
                rule=toml.parent.parent.name,
                name=toml.parent.name,
                kind=str(meta["kind"]),
                code=str(meta["code"]),
                mechanism=str(meta.get("mechanism", "")),
                path=toml.parent,
            )
        )
    return found


def play(case: Case, workdir: Path, python: str) -> set[str]:
    """Validate a copy of ``case`` (runtime stage, only its rule selected) and return the
    codes reported. The copy keeps the corpus free of anything a run writes."""
    from envkit.validation import validate

    copy = workdir / case.name
    shutil.copytree(case.path, copy)
    report = validate(copy, python=python, select=[case.code], train_path=False, episodes=3)
    return {f.code for f in report.findings}
