"""Redaction of secrets before anything leaves the node (tickets, JSON, bundles, the terminal).

Every output goes through :mod:`troubleshooter.output.emit`, which redacts with the configured Redactor.

Rules, each tested in tests/test_redact.py and tests/test_leaks.py:
- environment-style assignments whose NAME looks secret (TOKEN, SECRET, PASSWORD, PASSWD, PASS, API_KEY,
  ACCESS_KEY, PRIVATE_KEY, ACCOUNT_KEY, CREDENTIAL, AUTH, SESSION, COOKIE, and names ending in _KEY, _PWD or
  _PASS) keep the name, lose the value; JSON-quoted keys too (``"api_key": "..."`` keeps its quotes);
- command-line options ``--password X``, ``--password=X``, ``--token``, ``--api-key``; ``curl -u user:pass``
  keeps the user; ``sshpass -p X``; ``-p X`` after other tools is not guessed;
- URLs with credentials ``scheme://user:pass@host`` keep the user, lose the password;
- known token formats anywhere: GitHub (ghp_, gho_, ghs_, ghu_, github_pat_), GitLab (glpat-), Hugging Face
  (hf_), Slack (xox?-), AWS access key ids (AKIA/ASIA...), Google API keys (AIza...), npm (npm_), Stripe
  (sk_live_/rk_live_), JWTs (three base64url parts), PEM private key blocks, Bearer tokens;
- a value seen next to a secret name (``NAME=value``, a key ``env.var.DB_PASS``, a comparison row whose fact
  is ``env.var.HF_TOKEN``) is a known secret: its other occurrences in the same text or document go too;
- extra patterns from the settings (``redact_extra``).

Every pattern runs in linear time: no nested quantifiers, names and values bounded.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any

MASK = "[REDACTED]"
MIN_KNOWN = 6  # a learned secret shorter than this is masked where it stands, not everywhere (too common)
MAX_KNOWN = 512

_KEYWORDS = (r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|ACCOUNT_?KEY|CREDENTIAL"
             r"|AUTH|SESSION|COOKIE")
# a name holding one of the keywords, or ending in _KEY/_PWD/_PASS (not PWD, the working directory), of any
# length: an atomic group (Python 3.11) so that a failed match never backtracks into the name
_SECRET_NAME = (rf"(?>[A-Za-z0-9_]*?(?:{_KEYWORDS})[A-Za-z0-9_]*"
                r"|[A-Za-z0-9_]*?_(?:KEY|PWD|PASS)(?![A-Za-z0-9_]))")
_SECRET_OPTION = r"--?(?:password|passwd|pass|token|api-key|apikey|secret|access-key|private-key|auth-token)"
_VALUE = re.compile(r"\"[^\"\n]{0,4096}\"|'[^'\n]{0,4096}'|[^\s\x00,;\"']{1,4096}")
_NOT_A_VALUE = re.compile(r"(?i)(?:bearer|basic|token)\s|\[REDACTED\]")
# NAME=value; "NAME": "value" (JSON). Any identifier followed by = or : is a candidate (one scan, no
# backtracking into the name); whether it names a secret is decided after. Not the user part of a URL
# (scheme://oauth2:pw@host: the URL rule keeps the host) and not an Authorization header's scheme (the header
# rule masks the credential after "Bearer").
# (a name starts at a word start only, so each word is scanned once: linear however long the name)
_NAME_SEP = re.compile(r"(?<!://)(?<![A-Za-z0-9_])([\"']?)([A-Za-z0-9_]+)([\"']?[ \t]{0,8}[=:][ \t]{0,8})")


def _assignments(s: str):
    """(start, end, value) of each value assigned to a secret-named NAME in ``s``, in order, not overlapping."""
    last = 0
    for m in _NAME_SEP.finditer(s):
        pos = m.end()
        if m.start() < last or _NAME_RX.fullmatch(m.group(2)) is None or _NOT_A_VALUE.match(s, pos):
            continue
        v = _VALUE.match(s, pos)
        if v is not None:
            last = v.end()
            yield v.start(), v.end(), v.group(0)


def _mask_assign(s: str, found: set[str] | None = None) -> str:
    """``s`` with every secret-named assignment's value masked; the values (unquoted) go into ``found``."""
    out, pos = [], 0
    for a, b, v in _assignments(s):
        if found is not None and len(found) < MAX_KNOWN:
            u = _unquote(v)
            if len(u) >= MIN_KNOWN and MASK not in u:
                found.add(u)
        out.append(s[pos:a])
        out.append(f"{v[0]}{MASK}{v[0]}" if v[:1] in "\"'" and len(v) >= 2 else MASK)
        pos = b
    if not pos:
        return s
    out.append(s[pos:])
    return "".join(out)


_RULES: list[tuple[re.Pattern[str], Any]] = [
    (re.compile(rf"(?i)(?<![\w-])({_SECRET_OPTION}(?:=|\s+))(\"[^\"]*\"|'[^']*'|\S+)"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b(sshpass\s+-p\s*)(\"[^\"]*\"|'[^']*'|\S+)"), rf"\1{MASK}"),
    # scheme://user:password@ (a long run of scheme characters matches from its tail: no \b before it)
    (re.compile(r"(?i)([a-z][a-z0-9+.-]{0,31}://[^/\s:@]{1,256}):([^@\s/]{1,1024})@"), rf"\1:{MASK}@"),
    (re.compile(r"(?i)\b(authorization:\s*(?:bearer|basic|token)\s+)\S+"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{16,}"), rf"\1{MASK}"),
    (re.compile(r"\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{20,}\b"), MASK),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"), MASK),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), MASK),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), MASK),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), MASK),
    (re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), MASK),
    (re.compile(r"\b[rs]k_live_[0-9A-Za-z]{20,}\b"), MASK),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"), MASK),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"), MASK),
]

# Upper-case literals without one of which a rule cannot match (keyed by pattern): its scan is skipped.
_NEEDS: dict[str, tuple[str, ...]] = {}
for _rx, _ in _RULES:
    _p = _rx.pattern
    for _key, _lits in (("sshpass", ("SSHPASS",)), ("://", ("://",)), ("authorization", ("AUTHORIZATION",)),
                        ("(bearer", ("BEARER",)), ("ghp|gho", ("GHP_", "GHO_", "GHS_", "GHU_", "GHR_")),
                        ("github_pat_", ("GITHUB_PAT_",)), ("glpat-", ("GLPAT-",)), ("hf_", ("HF_",)),
                        ("xox", ("XOX",)), ("AKIA", ("AKIA", "ASIA")), ("AIza", ("AIZA",)), ("npm_", ("NPM_",)),
                        ("_live_", ("K_LIVE_",)), ("eyJ", ("EYJ",)), ("sk-", ("SK-",)),
                        ("password|passwd", ("PASS", "TOKEN", "KEY", "SECRET"))):
        if _key in _p:
            _NEEDS[_p] = _lits
            break

_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END [A-Z ]{0,40}PRIVATE KEY-----")


# curl -u user:pass / --user user:pass (and -uuser:pass) on curl's line: the user stays (docker's -u 1000:1000 is a
# uid:gid, not a password, and no curl precedes it)
_USER_OPT = re.compile(r"(?<![\w-])(-u\s*|--user(?:=|\s+))(['\"]?)([^\s:'\"]{1,256}):([^\s'\"]{1,4096})")


def _mask_curl_user(s: str) -> str:
    if "curl" not in s:
        return s

    def repl(m: re.Match[str]) -> str:
        lo = max(0, m.start() - 4096)  # bounded look-back: linear however many matches
        lo = max(lo, s.rfind("\n", lo, m.start()) + 1)
        if s.rfind("curl", lo, m.start()) < 0:
            return m.group(0)
        return f"{m.group(1)}{m.group(2)}{m.group(3)}:{MASK}"

    return _USER_OPT.sub(repl, s)


def _mask_pem(s: str) -> str:
    """PEM private key blocks, BEGIN to the next END: one scan, however many BEGINs lack their END."""
    if "PRIVATE KEY-----" not in s:
        return s
    out, pos = [], 0
    while True:
        b = _PEM_BEGIN.search(s, pos)
        e = _PEM_END.search(s, b.end()) if b else None
        if not b or not e:
            break
        out.append(s[pos:b.start()])
        out.append(MASK)
        pos = e.end()
    out.append(s[pos:])
    return "".join(out)


_ENV_ENTRY = re.compile(rf"(?is)^({_SECRET_NAME}=).+")
_NAME_RX = re.compile(_SECRET_NAME, re.IGNORECASE)
# fields that name what a row of a comparison is about, and those that only describe the row
_NAME_FIELDS = ("name", "fact", "key", "var", "variable")
#: our own keys that are named like secrets and are not ("session": a session id, "sessions": a directory)
OWN_KEYS = frozenset({"session", "sessions"})
_NOT_VALUES = frozenset({"kind", "unit", "status", "category", "note", "verdict", "direction", "node", "nodes",
                         "id", "title", "area", "label", "matters", "score", "ratio", "perf_ratio", "measured",
                         "type", "doc", "parser", "summary", "why", "reason", "description", "source"})
#: names that look secret and hold none: env.secret_names lists variable names, not their values
_NOT_SECRET = frozenset({"secret_names"})


def secret_name(name: str) -> bool:
    """A variable, key or fact name (its last dotted or spaced part) that holds a secret."""
    last = re.split(r"[.\s]", name.strip())[-1] if name else ""
    return bool(last) and last.lower() not in _NOT_SECRET and _NAME_RX.fullmatch(last) is not None


def _unquote(v: str) -> str:
    return v[1:-1] if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0] else v


class Redactor:
    def __init__(self, extra: Iterable[str] = (), enabled: bool = True) -> None:
        self.enabled = enabled
        self.rules = list(_RULES)
        for pat in extra:
            self.rules.append((re.compile(pat), MASK))

    # ---- known secrets: values seen next to a secret name
    @staticmethod
    def learn_text(s: str, known: set[str]) -> None:
        if not s or len(known) >= MAX_KNOWN:
            return
        for _, _, v in _assignments(s):
            v = _unquote(v)
            if len(v) >= MIN_KNOWN and MASK not in v:
                known.add(v)
        if "\x00" in s:
            for e in s.split("\x00"):
                name, eq, v = e.partition("=")
                if eq and len(v) >= MIN_KNOWN and secret_name(name):
                    known.add(v)

    def learn(self, o: Any, known: set[str] | None = None, _secret: bool = False,
              keep: frozenset[str] = OWN_KEYS) -> set[str]:
        """The literal secrets in ``o``: scalars under a secret-named key, values in a row about a
        secret-named fact (``{"name": "env.var.DB_PASS", "before": ..., "after": ...}``)."""
        known = set() if known is None else known
        if len(known) >= MAX_KNOWN:
            return known
        if isinstance(o, str):
            if _secret and len(o) >= MIN_KNOWN and MASK not in o:
                known.add(o)
            self.learn_text(o, known)
        elif isinstance(o, (int, float)) and not isinstance(o, bool):
            if _secret and len(str(o)) >= MIN_KNOWN:
                known.add(str(o))
        elif isinstance(o, dict):
            row = _secret or any(isinstance(o.get(f), str) and secret_name(o[f]) for f in _NAME_FIELDS)
            for k, v in o.items():
                sk = (isinstance(k, str) and k not in keep and secret_name(k)
                      and isinstance(v, (str, int, float)) and not isinstance(v, bool))
                self.learn(v, known, sk or (row and k not in _NOT_VALUES and k not in _NAME_FIELDS), keep)
        elif isinstance(o, (list, tuple, set, frozenset)):
            for v in o:
                self.learn(v, known, _secret, keep)
        elif dataclasses.is_dataclass(o) and not isinstance(o, type):
            self.learn({f.name: getattr(o, f.name) for f in dataclasses.fields(o)}, known, _secret, keep)
        return known

    # ---- masking
    def text(self, s: str, known: Iterable[str] = ()) -> str:
        if not self.enabled or not s:
            return s
        found: set[str] = set(known)
        if "\x00" in s:
            self.learn_text(s, found)
        s = _mask_assign(_mask_curl_user(_mask_pem(s)), found)
        up = s.upper()
        for rx, repl in self.rules:
            need = _NEEDS.get(rx.pattern)
            if need is not None and not any(n in up for n in need):
                continue  # it cannot match without one of these: a 4 MB value is not scanned 16 times for nothing
            s = rx.sub(repl, s)
        for v in sorted(found, key=len, reverse=True):
            if v in s:
                s = s.replace(v, MASK)
        return s

    def bytes(self, b: bytes) -> bytes:
        if not self.enabled or not b:
            return b
        text = b.decode("utf-8", errors="surrogateescape")
        if "\x00" in text:
            # NUL-separated environ: an entry's value runs to the NUL and is never quoted, so a secret-named
            # variable loses all of it ("DB_PASSWORD=s3cr3t p@ss", not just up to the space)
            known: set[str] = set()
            self.learn_text(text, known)
            text = "\x00".join(_ENV_ENTRY.sub(rf"\1{MASK}", e) for e in text.split("\x00"))
            return self.text(text, known).encode("utf-8", errors="surrogateescape")
        return self.text(text).encode("utf-8", errors="surrogateescape")

    def argv(self, argv: Iterable[str]) -> list[str]:
        """A command line kept as a list: ``--password X`` is two elements, so the value is masked by position."""
        argv = list(argv)
        if not self.enabled:
            return argv
        out: list[str] = []
        for i, a in enumerate(argv):
            prev = argv[i - 1] if i else ""
            by_position = i and (re.fullmatch(_SECRET_OPTION, prev, re.IGNORECASE)
                                 or (prev == "-p" and i >= 2 and argv[i - 2].endswith("sshpass")))
            if not by_position and prev in ("-u", "--user") and ":" in a and any(x.endswith("curl") for x in argv[:i]):
                out.append(a.split(":", 1)[0] + ":" + MASK)  # curl -u user:pass as two elements
                continue
            out.append(MASK if by_position else self.text(a))
        return out

    def obj(self, o: Any, known: Iterable[str] = (), keep: Iterable[str] = ()) -> Any:
        """A copy of ``o`` (dicts, lists, dataclasses) with every secret masked. ``keep``: keys whose value is
        ours, not a secret, whatever their name (still redacted as text)."""
        if not self.enabled:
            return o
        keep = OWN_KEYS | frozenset(keep)
        found = self.learn(o, set(known), keep=keep)
        return self._obj(o, found, keep)

    def _obj(self, o: Any, known: set[str], keep: frozenset[str]) -> Any:
        if isinstance(o, str):
            return self.text(o, known)
        if isinstance(o, dict):
            out = {}
            for k, v in o.items():
                nk = self.text(k, known) if isinstance(k, str) else k
                if (isinstance(k, str) and k not in keep and secret_name(k) and isinstance(v, (str, int, float))
                        and not isinstance(v, bool)):
                    out[nk] = MASK
                else:
                    out[nk] = self._obj(v, known, keep)
            return out
        if isinstance(o, (list, tuple)):
            return [self._obj(v, known, keep) for v in o]
        if isinstance(o, (int, float)) and not isinstance(o, bool) and str(o) in known:
            return MASK
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            changes = {f.name: self._obj(getattr(o, f.name), known, keep) for f in dataclasses.fields(o) if f.init}
            try:
                return dataclasses.replace(o, **changes)
            except (TypeError, ValueError):
                return o
        return o


DEFAULT = Redactor()
