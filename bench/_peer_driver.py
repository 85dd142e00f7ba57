"""One peer auditor on one grader, run in that peer's own venv by bench/peers.py.

    PEER_PYTHON bench/_peer_driver.py  < request.json  > verdict.json

The request (JSON on stdin): ``{"tool": "envdoctor" | "bohrin", "name": str,
"grader_url": str | null, "taskset": "module::attr" | null, "path": [dir, ...],
"rows": [{"id": str, "prompt": str, "answer": str}, ...]}``. A grader is either a plain reward
function served by bench/peers.py over HTTP (``POST grader_url`` with ``{"row": id,
"completion": text}`` -> ``{"reward": float}`` or ``{"error": str}``) or, for rl-envdoctor, a
verifiers v1 taskset it loads itself (``taskset``, importable from ``path``).

The verdict (JSON on stdout): ``{"caught": bool, "detail": str, "fired": [str, ...]}``.
Only the standard library and the peer's own package are imported: this file runs in an
interpreter that has neither envkit nor its dependencies.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from typing import Any

FLOOR = 0.05
"""A known-wrong submission is "paid" above this share of the reference answer's reward (the
floor envkit's question-blind policies are judged against)."""


class GraderError(Exception):
    """The grader raised on a completion (the server's answer says why)."""


def _score(url: str, row: str, completion: str) -> float:
    body = json.dumps({"row": row, "completion": completion}).encode()
    req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 - loopback only
        answer = json.loads(resp.read())
    if "error" in answer:
        raise GraderError(answer["error"])
    return float(answer["reward"])


def envdoctor(request: dict[str, Any]) -> dict[str, Any]:
    """rl-envdoctor's scan and checks (its defaults); caught when a finding at ``medium`` or
    above fires, the bar its own self-test (``envdoctor.zoo.run``) uses for "loud"."""
    from envdoctor.checks import run_checks
    from envdoctor.runner import scan
    from envdoctor.targets import load_target
    from envdoctor.targets.function import FunctionTarget
    from envdoctor.types import Case, Severity

    if request.get("taskset"):
        sys.path[:0] = request.get("path", [])
        target = load_target(request["taskset"])
    else:
        url = request["grader_url"]

        def reward(completion: str, case: Case) -> float:
            return _score(url, case.id, completion)

        rows = request["rows"]
        cases = [Case(id=r["id"], prompt=r["prompt"], answer=r["answer"]) for r in rows]
        target = FunctionTarget(reward, cases, name=request["name"])
    report = run_checks(scan(target, n_cases=len(request.get("rows") or []) or 8))
    loud = [
        f for f in report.findings if Severity.rank(f.severity) <= Severity.rank(Severity.MEDIUM)
    ]
    fired = sorted({f"{f.check}:{f.severity}" for f in report.findings})
    detail = "; ".join(sorted({f"{f.check} ({f.severity})" for f in loud})) or "quiet"
    return {"caught": bool(loud), "detail": detail, "fired": fired}


def bohrin(request: dict[str, Any]) -> dict[str, Any]:
    """bohrin's battery (every registered operator) per row, the row's answer as the
    reference; caught when the grader pays a grounded (known-wrong) candidate more than
    :data:`FLOOR` of what the reference earns, or raises on one. bohrin itself leaves
    "accepted" to the caller; this is the bench's reading of it."""
    from bohrin.ir.task import Task
    from bohrin.mutate.battery import battery

    url = request["grader_url"]
    paid: list[str] = []
    raised: list[str] = []
    for row in request["rows"]:
        try:
            ceiling = _score(url, row["id"], row["answer"])
        except GraderError as exc:
            raised.append(f"reference: {exc}")
            continue
        task = Task(id=row["id"], prompt=row["prompt"], reference=row["answer"])
        for cand in battery(task).grounded:
            try:
                reward = _score(url, row["id"], cand.payload)
            except GraderError as exc:
                raised.append(f"{cand.provenance.operator}: {exc}")
                continue
            if ceiling > 0 and reward > FLOOR * ceiling:
                paid.append(f"{cand.provenance.operator} {reward:.2f}/{ceiling:.2f}")
    fired = sorted({p.split(" ")[0] for p in paid}) + (["grader-raised"] if raised else [])
    detail = "; ".join(sorted(set(paid))[:4] + sorted(set(raised))[:2]) or "quiet"
    return {"caught": bool(paid or raised), "detail": detail, "fired": fired}


def main() -> int:
    request = json.load(sys.stdin)
    verdict = {"envdoctor": envdoctor, "bohrin": bohrin}[request["tool"]](request)
    json.dump(verdict, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
