"""Moved to :mod:`envkit.secret_scan` (issue #12: one secret scanner for validate, build and
push). This module re-exports it for code that still imports the old path."""

from envkit.secret_scan import SecretHit, looks_secret, redact, scan_text

__all__ = ["SecretHit", "looks_secret", "redact", "scan_text"]
