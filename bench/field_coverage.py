"""docs/coverage.md: the field's failure classes -> envkit's codes -> field corpus cases ->
found / missed, beside the peers' verdicts.

    python bench/field_coverage.py --write            # regenerate docs/coverage.md (offline)
    python bench/field_coverage.py --check            # exit 1 when docs/coverage.md is stale
    python bench/field_coverage.py --refresh-classes  # re-read the class lists from the peers

Everything it reads is in the repository, so the page regenerates offline and a test
(tests/corpus/test_coverage.py) fails when it is stale:

- the classes: bench/data/classes.json, read by ``--refresh-classes`` from bohrin 0.4.2's
  weakness list (``bohrin/spec/weaknesses.toml``: BGW-101...138 and its Terminal Wrench
  crosswalk) and rl-envdoctor 0.1.0's checks (``envdoctor.checks.REGISTRY``), each installed in
  a venv of its own (bench/peers.py);
- envkit's side: each rule's ``classes`` (``envkit rules --format json``);
- the cases: tests/corpus/field/*/*/case.toml (``external``, ``kind``, the triaged ``code``)
  and tests/corpus/field.py's known misses and noise;
- the peers: bench/data/peers.json, written by ``python bench/peers.py --json ...``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from envkit.findings import RULES  # noqa: E402 - after the repository is importable
from envkit.validation import rules as _registered  # noqa: E402, F401 - registers every rule
from tests.corpus.field import KNOWN_MISSES, KNOWN_NOISE, FieldCase, field_cases  # noqa: E402

DOC = REPO / "docs" / "coverage.md"
CLASSES = REPO / "bench" / "data" / "classes.json"
PEERS = REPO / "bench" / "data" / "peers.json"
BOHRIN_LIST = ("bohrin", ("bohrin==0.4.2",))  # the weakness list's venv (bench/peers.py)
PEER_TOOLS = ("rl-envdoctor", "bohrin")

_READ_BOHRIN = """
import json, pathlib, tomllib, importlib.metadata as m, bohrin
spec = pathlib.Path(bohrin.__file__).parent / "spec" / "weaknesses.toml"
doc = tomllib.loads(spec.read_text())
tw = doc["crosswalk"]["terminal-wrench"]
print(json.dumps({
    "version": m.version("bohrin"),
    "families": doc["families"],
    "weaknesses": [{k: w[k] for k in ("id", "name", "family", "shapes", "sources")}
                   for w in doc["weakness"]],
    "terminal_wrench": {"source": tw["source"], "map": tw["map"]},
}))
"""
_READ_ENVDOCTOR = """
import json, importlib.metadata as m
from envdoctor.checks import REGISTRY
print(json.dumps({
    "version": m.version("rl-envdoctor"),
    "checks": [{"id": k, "title": (v.__doc__ or "").strip().splitlines()[0]}
               for k, v in REGISTRY.items()],
}))
"""


def refresh_classes() -> dict[str, Any]:
    """Read the class lists from the installed peers (their venvs are made on first use)."""
    from bench.peers import peer_python, venv_python

    def run(python: Path, program: str) -> dict[str, Any]:
        out = subprocess.run([str(python), "-c", program], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"reading a class list failed: {out.stderr.strip()[-300:]}")
        return json.loads(out.stdout)

    bohrin = run(venv_python(*BOHRIN_LIST), _READ_BOHRIN)
    envdoctor = run(peer_python("rl-envdoctor"), _READ_ENVDOCTOR)
    return {
        "bohrin": bohrin,
        "rl-envdoctor": envdoctor,
        "note": (
            "Class ids, names, families and sources from bohrin's weakness list "
            "(Apache-2.0, https://github.com/prabhu-gopal/bohrin) and rl-envdoctor's check "
            "names (MIT, https://github.com/really-notabot/envdoctor); written by "
            "`python bench/field_coverage.py --refresh-classes`."
        ),
    }


# -- reading the inputs ------------------------------------------------------------------------
def slug(check: str) -> str:
    """rl-envdoctor's check id as a class id (``empty_ties_correct`` -> ``empty-ties-correct``)."""
    return check.replace("_", "-")


def codes_by_class() -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for code, rule in sorted(RULES.items()):
        for cls in rule.classes:
            out[cls].append(code)
    return out


def field_status(case: FieldCase) -> str:
    """What the repository records about ``case``: ``found EKxxx`` (triaged), ``missed`` (a
    known miss), ``noise`` / ``quiet`` for a near-miss, ``untriaged``."""
    if case.kind == "nearmiss":
        return "noise" if case.key in KNOWN_NOISE else "quiet"
    if case.key in KNOWN_MISSES:
        return "missed"
    return f"found {case.code}" if case.code else "untriaged"


def peer_rows(peers: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["bed"], r["key"]): r for r in peers.get("rows", [])}


def _cell(row: dict[str, Any] | None, tool: str) -> str:
    if row is None or tool not in row["verdicts"]:
        return "not run"
    v = row["verdicts"][tool]["verdict"]
    return {"could-not-run": "could not run"}.get(v, v)


def _tally(cases: list[FieldCase], rows: dict[tuple[str, str], dict[str, Any]], tool: str) -> str:
    defects = [c for c in cases if c.kind == "defect"]
    if not defects:
        return "-"
    if tool == "envkit":
        n = sum(field_status(c).startswith("found") for c in defects)
    else:
        n = sum(_cell(rows.get(("field", c.key)), tool) == "caught" for c in defects)
    return f"{n}/{len(defects)}"


# -- the page ----------------------------------------------------------------------------------
def render(classes: dict[str, Any], peers: dict[str, Any], cases: list[FieldCase]) -> str:
    """docs/coverage.md's text from its inputs (deterministic: no clock, no machine facts)."""
    by_class = codes_by_class()
    rows = peer_rows(peers)
    cases_by_class: dict[str, list[FieldCase]] = defaultdict(list)
    for c in cases:
        cases_by_class[c.external].append(c)
    bohrin, envdoctor = classes["bohrin"], classes["rl-envdoctor"]
    defects = [c for c in cases if c.kind == "defect"]
    nearmisses = [c for c in cases if c.kind == "nearmiss"]
    own = sum(field_status(c).startswith("found") for c in defects)
    quiet = sum(field_status(c) == "quiet" for c in nearmisses)
    out = [
        "# Coverage against the field",
        "",
        (
            "<!-- Generated by `python bench/field_coverage.py --write`; do not edit. "
            "tests/corpus/test_coverage.py fails when it is stale. -->"
        ),
        "",
        (
            "Which published failure classes envkit's rules find, measured on cases written from "
            "those classes alone (tests/corpus/field/: each case written by someone given only the "
            "external class and OpenEnv's protocol, never an envkit rule), beside the two peers "
            "that audit graders (bench/peers.py). A rule names the classes it finds "
            "(`envkit rules --format json`, `classes`); a case's code is assigned by triage after "
            "envkit has played it."
        ),
        "",
        (
            f"- Class lists: bohrin {bohrin['version']}'s weakness list "
            f"({len(bohrin['weaknesses'])} classes, BGW-101...138), its Terminal Wrench crosswalk "
            f"({len(bohrin['terminal_wrench']['map'])} categories, {bohrin['terminal_wrench']['source']}), "
            f"rl-envdoctor {envdoctor['version']}'s {len(envdoctor['checks'])} checks."
        ),
        (
            f"- Field cases: {len(defects)} defects, {len(nearmisses)} near-misses in "
            f"{len({c.external for c in cases})} classes; defects found by envkit's own code: "
            f"{own} of {len(defects)}; near-misses quiet: {quiet} of {len(nearmisses)} "
            "(untriaged defects count as not found)."
        ),
        (
            f"- Peers: {', '.join(f'{k} {v}' for k, v in sorted(peers.get('peers', {}).items())) or 'not run'}"
            " (bench/data/peers.json)."
        ),
        "",
        "## bohrin's weakness list",
        "",
        (
            "| class | name | family | envkit codes | field cases (defects / near-misses) "
            "| envkit | rl-envdoctor | bohrin 0.3.0 |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for w in sorted(bohrin["weaknesses"], key=lambda w: w["id"]):
        group = cases_by_class.get(w["id"], [])
        nd = sum(c.kind == "defect" for c in group)
        out.append(
            f"| {w['id']} | {w['name']} | {w['family']} | {', '.join(by_class.get(w['id'], [])) or '-'} "
            f"| {nd} / {len(group) - nd} | {_tally(group, rows, 'envkit')} "
            f"| {_tally(group, rows, 'rl-envdoctor')} | {_tally(group, rows, 'bohrin')} |"
        )
    out += [
        "",
        "## Terminal Wrench's exploit categories",
        "",
        "| category | BGW (bohrin's crosswalk) | envkit codes | field cases | envkit |",
        "|---|---|---|---|---|",
    ]
    for cat, bgw in bohrin["terminal_wrench"]["map"].items():
        cid = f"TerminalWrench:{cat}"
        group = cases_by_class.get(cid, [])
        codes = sorted(set(by_class.get(cid, [])) | {c for b in bgw for c in by_class.get(b, [])})
        out.append(
            f"| {cat} | {', '.join(bgw) or '-'} | {', '.join(codes) or '-'} | {len(group)} "
            f"| {_tally(group, rows, 'envkit')} |"
        )
    zoo = [r for r in peers.get("rows", []) if r["bed"] == "zoo"]
    out += [
        "",
        "## rl-envdoctor's checks",
        "",
        (
            "The zoo columns are rl-envdoctor's own self-test specimens (bench/peers.py wraps each "
            "in an OpenEnv environment at run time): of the specimens that expect the check, how "
            "many each tool caught."
        ),
        "",
        "| check | what it means | envkit codes | field cases | zoo: envkit | rl-envdoctor | bohrin 0.3.0 |",
        "|---|---|---|---|---|---|---|",
    ]
    for check in envdoctor["checks"]:
        cid = f"rl-envdoctor:{slug(check['id'])}"
        group = cases_by_class.get(cid, [])
        mine = [r for r in zoo if r["external"] == f"rl-envdoctor:{check['id']}"]
        cells = [
            f"{sum(_cell(r, t) == 'caught' for r in mine)}/{len(mine)}" if mine else "-"
            for t in ("envkit", *PEER_TOOLS)
        ]
        out.append(
            f"| {check['id']} | {check['title'].replace('|', '/')} | "
            f"{', '.join(by_class.get(cid, [])) or '-'} | {len(group)} | "
            + " | ".join(cells)
            + " |"
        )
    out += [
        "",
        "## Field cases",
        "",
        "| case | class | kind | envkit (recorded) | rl-envdoctor | bohrin 0.3.0 |",
        "|---|---|---|---|---|---|",
    ]
    for c in cases:
        row = rows.get(("field", c.key))
        out.append(
            f"| {c.key} | {c.external} | {c.kind} | {field_status(c)} "
            f"| {_cell(row, 'rl-envdoctor')} | {_cell(row, 'bohrin')} |"
        )
    if not cases:
        out.append("| (none yet) | | | | | |")
    out += ["", "## The peers' bed", ""]
    out += summary(peers)
    out += [
        "",
        "Outside any class above, envkit's rules with no external class: "
        + ", ".join(
            code for code, r in sorted(RULES.items()) if r.stage == "runtime" and not r.classes
        )
        + ".",
    ]
    return "\n".join(out) + "\n"


def summary(peers: dict[str, Any]) -> list[str]:
    """Per bed and tool: defects caught, near-misses quiet, could not run."""
    rows = peers.get("rows", [])
    if not rows:
        return ["Not run yet: `python bench/peers.py --json bench/data/peers.json`."]
    out = [
        "| bed | tool | defects caught | near-misses quiet | could not run |",
        "|---|---|---|---|---|",
    ]
    for bed in dict.fromkeys(r["bed"] for r in rows):
        group = [r for r in rows if r["bed"] == bed]
        for tool in ("envkit", *PEER_TOOLS):
            d = [_cell(r, tool) for r in group if r["kind"] == "defect"]
            n = [_cell(r, tool) for r in group if r["kind"] != "defect"]
            cnr = (d + n).count("could not run")
            out.append(
                f"| {bed} | {tool} | {d.count('caught')} of {len(d)} | {n.count('quiet')} of {len(n)} | {cnr} |"
            )
    return out


def current() -> str:
    classes = json.loads(CLASSES.read_text(encoding="utf-8"))
    peers = json.loads(PEERS.read_text(encoding="utf-8")) if PEERS.is_file() else {}
    return render(classes, peers, field_cases())


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate docs/coverage.md")
    group.add_argument("--check", action="store_true", help="exit 1 when it is stale")
    group.add_argument("--refresh-classes", action="store_true", help="re-read the class lists")
    args = parser.parse_args()
    if args.refresh_classes:
        CLASSES.parent.mkdir(parents=True, exist_ok=True)
        doc = json.dumps(refresh_classes(), indent=1, sort_keys=True) + "\n"
        CLASSES.write_text(doc, encoding="utf-8")
        print(f"wrote {CLASSES.relative_to(REPO)}")
        return 0
    text = current()
    if args.check:
        if not DOC.is_file() or DOC.read_text(encoding="utf-8") != text:
            print("docs/coverage.md is stale: run `python bench/field_coverage.py --write`")
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
