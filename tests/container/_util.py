"""Helpers for the Docker tests (no fixtures here)."""

from __future__ import annotations

from envkit.container._engine import listed_containers

TEST_LABEL = "envkit.test"


def containers_with(dclient, run_id: str, **extra: str) -> list:
    """Every container (running or not) carrying this session's label (and ``extra``)."""
    sel = [f"{TEST_LABEL}={run_id}"] + [f"{k}={v}" for k, v in extra.items()]
    return listed_containers(dclient, {"label": sel})


def containers_mentioning(dclient, marker: str) -> list:
    """Every container (any state) whose command line contains ``marker`` (catches
    intermediate build containers, which carry no label)."""
    out = []
    for c in listed_containers(dclient, {}):
        cfg = c.attrs.get("Config") or {}
        text = " ".join(str(x) for x in (cfg.get("Cmd") or []) + (cfg.get("Entrypoint") or []))
        if marker in text:
            out.append(c)
    return out


def write_dockerfile(path, text: str) -> None:
    (path / "Dockerfile").write_text(text, encoding="utf-8")
