"""The push preflight: static validate and the secret scan on the staged copy, i.e. on exactly
what would be uploaded."""

from __future__ import annotations

from pathlib import Path

from envkit.errors import PushBlockedError
from envkit.findings import Finding
from envkit.hub.auth import Credentials
from envkit.hub.results import Progress
from envkit.hub.staging import SecretHit, StagedFolder, scan_secrets
from envkit.validation import validate as run_validate
from envkit.validation.rules.deploy import SECRET_FILE, SECRET_IN_FILE

PREFLIGHT_SELECT = ["EK1", "EK2", "EK3", "EK6"]


def _preflight(root: Path, run_all: bool) -> tuple[list[Finding], str]:
    """Static validate findings on ``root`` (all static rules, or the EK6xx ones only).

    Fails closed: an exception from a rule propagates (the CLI reports an internal
    error, exit 2); it never degrades the preflight to a bare secret scan.
    """
    select = PREFLIGHT_SELECT if run_all else ["EK6"]
    report = run_validate(root, static=True, select=select)
    return list(report.findings), "validate" if run_all else "validate (EK6 only)"


def finding_line(f: Finding) -> str:
    """``CODE location: message`` (``CODE: message`` without a location), one line."""
    loc = f" {f.location}" if getattr(f, "location", None) else ""
    return f"{f.code}{loc}: {f.message}"


def preflight_gate(
    staged: StagedFolder, validate: bool, creds: Credentials | None, say: Progress
) -> tuple[list[str], str]:
    """Static rules and the secret scan on the staged copy, i.e. on exactly what would be
    uploaded (after the card repair and the Dockerfile move, which must not count against it).

    Returns:
        ``(warnings, preflight)``: the findings that do not stop the push, as lines, and
        which preflight ran.

    Raises:
        PushBlockedError: secrets (a scanner hit, the token in use, an EK6xx error) in any
            case; other static validate errors unless ``validate`` is False.
    """
    say("Checking the files to upload (static validate)…")
    findings, preflight = _preflight(staged.path, run_all=validate)
    blocking = [
        f
        for f in findings
        if f.severity.value == "error" and (validate or f.code.startswith("EK6"))
    ]
    warnings = [finding_line(f) for f in findings if f not in blocking]
    hits: list[SecretHit] = scan_secrets(
        staged.path,
        [f.path for f in staged.files],
        extra_literals=(creds.token,) if creds else (),
    )
    ek6 = [f for f in blocking if f.code.startswith("EK6")]
    secrets = {SECRET_FILE.code, SECRET_IN_FILE.code}
    if not hits and ek6 and not [f for f in ek6 if f.code in secrets]:
        # unscannable files (EK606) or names no Hub path can hold (EK607): no secret found
        files = sorted({str(getattr(f.location, "file", "?")) for f in ek6})
        raise PushBlockedError(
            f"Refusing to push: files that cannot be uploaded safely ({', '.join(files)}).",
            hint="Fix or exclude them (in .gitignore/.dockerignore); each line says why.",
            details="\n".join(finding_line(f) for f in ek6),
        )
    if hits or ek6:
        lines = [f"{h.file}:{h.line}: {h.kind}" for h in hits] + [finding_line(f) for f in ek6]
        files = sorted(
            {h.file for h in hits} | {str(getattr(f.location, "file", "?")) for f in ek6}
        )
        raise PushBlockedError(
            f"Refusing to push: secrets would be uploaded ({', '.join(files)}).",
            hint="Remove them from the files (read them from the environment at run time and "
            "set them with --secret KEY), or exclude the files in .gitignore/.dockerignore. "
            "No option uploads secrets.",
            details="\n".join(lines),
        )
    if blocking:
        raise PushBlockedError(
            f"Refusing to push: static validate found {len(blocking)} error(s).",
            hint="Fix them (`envkit validate --static` explains each), or push anyway with "
            "--no-validate.",
            details="\n".join(finding_line(f) for f in blocking),
        )
    return warnings, preflight
