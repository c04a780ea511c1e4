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

_SECRET_WORD = r"(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|SESSION|COOKIE)"
# A whole word (at a word start) that holds a secret word: "HF_TOKEN", "db_password_file". Written so that
# matching stays linear: a lazy lookahead finds the secret word inside the word, then the word is taken
# whole with no backtracking (the lookahead-and-backreference form of an atomic group, for Python 3.10).
# The naive [A-Za-z0-9_]*WORD[A-Za-z0-9_]* took quadratic time on "TOKENTOKEN...".
_SECRET_NAME = rf"(?=[A-Za-z0-9_]*?{_SECRET_WORD})(?=(?P<name>[A-Za-z0-9_]+))(?P=name)"
_SECRET_NAME_FULL = re.compile(rf"(?i)[A-Za-z0-9_]*\Z")
_SECRET_WORD_RX = re.compile(rf"(?i){_SECRET_WORD}")
_SECRET_OPTION = r"--?(?:password|passwd|pass|token|api-key|apikey|secret|access-key|private-key|auth-token)"
_RULES: list[tuple[re.Pattern[str], str]] = [
    # a block ends at its END line; the body never runs past another BEGIN, so many unterminated BEGINs are
    # each scanned once (linear), not each to the end of the text
    (re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:(?!-----BEGIN ).)*?-----END [A-Z ]{0,40}PRIVATE KEY-----", re.S), MASK),
    # NAME=value; not the user part of a URL (scheme://oauth2:pw@host: the URL rule keeps the host) and not an
    # Authorization header's scheme (the header rule masks the credential after "Bearer")
    (re.compile(rf"(?i)(?<!://)\b({_SECRET_NAME})(\s*[=:]\s*)(?!(?:bearer|basic|token)\s+\S)(\"[^\"]*\"|'[^']*'|[^\s\x00,;]+)"),
     rf"\1\3{MASK}"),
    (re.compile(rf"(?i)(?<![\w-])({_SECRET_OPTION}(?:=|\s+))(\"[^\"]*\"|'[^']*'|\S+)"), rf"\1{MASK}"),
    # scheme://user:password@: the scheme is bounded (an unbounded one, tried from every word start of
    # "a.a.a.…", was quadratic: 77 s on 120 kB); a longer run of scheme characters matches from its tail
    (re.compile(r"(?i)([a-z][a-z0-9+.-]{0,63}://[^/\s:@]+):([^@\s/]+)@"), rf"\1:{MASK}@"),
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

# rules that cannot match without a literal: their scan is skipped when the text lacks it
_NEEDS = {_RULES[0][0]: "-----BEGIN ", _RULES[3][0]: "://"}

_ENV_ENTRY = re.compile(rf"(?is)^({_SECRET_NAME}=).+")


def is_secret_name(name: str) -> bool:
    """``name`` is one word (letters, digits, _) that holds a secret word: TOKEN, PASSWORD, API_KEY ..."""
    return bool(_SECRET_NAME_FULL.match(name)) and bool(_SECRET_WORD_RX.search(name))


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
            need = _NEEDS.get(rx)
            if need is not None and need not in s:
                continue  # this rule cannot match: skip its scan
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
                if isinstance(k, str) and is_secret_name(k.rsplit(".", 1)[-1]) and isinstance(v, (str, int, float)):
                    out[k] = MASK
                else:
                    out[k] = self.obj(v)
            return out
        if isinstance(o, (list, tuple)):
            return [self.obj(v) for v in o]
        return o


DEFAULT = Redactor()
