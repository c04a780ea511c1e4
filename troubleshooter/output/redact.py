"""Redaction of secrets before anything leaves the node (tickets, JSON, bundles).

Rules, each tested in tests/test_redact.py:
- environment-style assignments whose NAME looks secret (TOKEN, SECRET, PASSWORD, PASSWD, API_KEY, ACCESS_KEY,
  PRIVATE_KEY, CREDENTIAL, AUTH, SESSION, COOKIE) keep the name, lose the value;
- command-line options ``--password X``, ``--password=X``, ``--token``, ``--api-key``, ``-p X`` after mysql-like
  tools are not guessed; only named secret options;
- URLs with credentials ``scheme://user:pass@host`` keep the user, lose the password;
- known token formats anywhere: GitHub (ghp_, gho_, ghs_, ghu_, github_pat_), Hugging Face (hf_), Slack (xox?-),
  AWS access key ids (AKIA/ASIA...), JWTs (three base64url parts), PEM private key blocks, Bearer tokens;
- extra patterns from the settings (``redact_extra``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

MASK = "[REDACTED]"

_SECRET_NAME = r"[A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|SESSION|COOKIE)[A-Za-z0-9_]*"
_SECRET_OPTION = r"--?(?:password|passwd|pass|token|api-key|apikey|secret|access-key|private-key|auth-token)"
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S), MASK),
    # NAME=value; not the user part of a URL (scheme://oauth2:pw@host: the URL rule keeps the host) and not an
    # Authorization header's scheme (the header rule masks the credential after "Bearer")
    (re.compile(rf"(?i)(?<!://)\b({_SECRET_NAME})(\s*[=:]\s*)(?!(?:bearer|basic|token)\s+\S)(\"[^\"]*\"|'[^']*'|[^\s\x00,;]+)"),
     rf"\1\2{MASK}"),
    (re.compile(rf"(?i)(?<![\w-])({_SECRET_OPTION}(?:=|\s+))(\"[^\"]*\"|'[^']*'|\S+)"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+):([^@\s/]+)@"), rf"\1:{MASK}@"),
    (re.compile(r"(?i)\b(authorization:\s*(?:bearer|basic|token)\s+)\S+"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{16,}"), rf"\1{MASK}"),
    (re.compile(r"\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{20,}\b"), MASK),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"), MASK),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), MASK),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), MASK),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"), MASK),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"), MASK),
]

_ENV_ENTRY = re.compile(rf"(?is)^({_SECRET_NAME}=).+")


class Redactor:
    def __init__(self, extra: Iterable[str] = (), enabled: bool = True) -> None:
        self.enabled = enabled
        self.rules = list(_RULES)
        for pat in extra:
            self.rules.append((re.compile(pat), MASK))

    def text(self, s: str) -> str:
        if not self.enabled or not s:
            return s
        for rx, repl in self.rules:
            s = rx.sub(repl, s)
        return s

    def bytes(self, b: bytes) -> bytes:
        if not self.enabled or not b:
            return b
        text = b.decode("utf-8", errors="surrogateescape")
        if "\x00" in text:
            # NUL-separated environ: an entry's value runs to the NUL and is never quoted, so a secret-named
            # variable loses all of it ("DB_PASSWORD=s3cr3t p@ss", not just up to the space)
            text = "\x00".join(_ENV_ENTRY.sub(rf"\1{MASK}", e) for e in text.split("\x00"))
        return self.text(text).encode("utf-8", errors="surrogateescape")

    def argv(self, argv: Iterable[str]) -> list[str]:
        """A command line kept as a list: ``--password X`` is two elements, so the value is masked by position."""
        argv = list(argv)
        if not self.enabled:
            return argv
        out: list[str] = []
        for i, a in enumerate(argv):
            out.append(MASK if i and re.fullmatch(_SECRET_OPTION, argv[i - 1], re.I) else self.text(a))
        return out

    def obj(self, o: Any) -> Any:
        if not self.enabled:
            return o
        if isinstance(o, str):
            return self.text(o)
        if isinstance(o, dict):
            out = {}
            for k, v in o.items():
                if isinstance(k, str) and re.fullmatch(_SECRET_NAME, k.rsplit(".", 1)[-1], re.I) and isinstance(v, (str, int, float)):
                    out[k] = MASK
                else:
                    out[k] = self.obj(v)
            return out
        if isinstance(o, (list, tuple)):
            return [self.obj(v) for v in o]
        return o


DEFAULT = Redactor()
