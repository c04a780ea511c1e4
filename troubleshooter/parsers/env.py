"""A process environment: ``env`` output, ``/proc/PID/environ`` (NUL-separated), or pasted shell exports.

Real sample (``srun --gres=gpu:1 env`` inside a Slurm 22.05 step, trimmed)::

    SLURM_JOB_ID=12
    SLURM_STEP_ID=0
    SLURMD_NODENAME=node1
    SLURM_JOB_NODELIST=node1
    SLURM_LOCALID=0
    CUDA_VISIBLE_DEVICES=0
    NCCL_TOPO_FILE=/etc/nccl/topo.xml
    NCCL_IB_QPS_PER_CONNECTION=4

Three input forms are read:

- ``env`` / ``printenv``: one ``NAME=value`` a line. A value that holds newlines (exported bash functions,
  ``BASH_FUNC_x%%=() {``) continues on the following lines that are not themselves ``NAME=value``: the
  text format is ambiguous there, and a continuation line that looks like an assignment starts a new
  variable.
- ``/proc/PID/environ``: entries separated by NUL bytes; exact, multi-line values included. NULs are
  split on *before* the usual noise stripping (which would delete them).
- ``export -p`` / ``declare -x`` (bash) and ``export NAME='value'`` (dash, zsh): quotes are removed as the
  shell would; ``declare -x NAME`` without a value (exported but unset) is not in the environment and is
  skipped.

What matters: the environment is the context the job really runs in. ``NCCL_TOPO_FILE`` set on the host but
missing in the container makes NCCL silently fall back to autodetection (case 4);
``NCCL_IB_QPS_PER_CONNECTION`` left at 1 cost 31% at 512 GPUs on a multi-level fabric (case 3); the
``SLURM_*`` variables tell whether the probes run inside the job's allocation at all.

Secrets: values are kept exactly as they are (tokens and passwords included). Redaction is the exporter's
job, so that a bundle's facts can still be compared locally; ``env.secret_names`` lists the names that look
like secrets so the exporter (and the user) know what to redact.

>>> f = parse("NCCL_DEBUG=INFO\\nNCCL_IB_QPS_PER_CONNECTION=4\\nPATH=/usr/bin")
>>> f["nccl.debug"], f["nccl.ib_qps_per_connection"], f["env.names"]
('INFO', 4, ['NCCL_DEBUG', 'NCCL_IB_QPS_PER_CONNECTION', 'PATH'])
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import OTHER_PROGRAM, ParseError, parser, strip_noise

# A name as `env` prints it. Exported bash functions appear as BASH_FUNC_name%%=() { ...
_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:%%)?"
_NAME_RX = re.compile(_NAME)  # compiled once: used per variable
_NAME_EQ = re.compile(rf"{_NAME}=")
_ASSIGN = re.compile(rf"^({_NAME})=(.*)$")
_EXPORT = re.compile(rf"^(?:export|declare\s+-[a-zA-Z]*x[a-zA-Z]*)\s+({_NAME})(?:=(.*))?$")
# Shell prompts pasted along with the output ("[user@host ~]$ env", "root@node:/# env | grep SLURM").
_PROMPT = re.compile(r"^(\[[^\]]*\]|[\w.-]+@[\w.-]+(:\S*)?)\s*[$#]\s")
# stderr of the launcher fused into a capture ("slurmstepd: error: couldn't chdir ...", "srun: error: ..."): OTHER_PROGRAM
_SECRET = re.compile(r"(TOKEN|SECRET|PASSW(OR)?D|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL|AUTH)", re.I)
_COMMON = ("PATH", "HOME", "USER", "SHELL", "PWD", "HOSTNAME", "LANG", "TERM", "LOGNAME", "SHLVL")

SLURM_FACTS = [
    ("slurm.in_job", "bool", "", "the context is inside a Slurm job allocation (SLURM_JOB_ID is set)"),
    ("slurm.in_step", "bool", "", "the context is inside a job step started by srun (SLURM_STEP_ID is set)"),
    ("slurm.job_id", "string", "", "SLURM_JOB_ID (or the older SLURM_JOBID)"),
    ("slurm.step_id", "string", "", "SLURM_STEP_ID (or SLURM_STEPID)"),
    ("slurm.node", "string", "", "SLURMD_NODENAME: the node this process runs on, as Slurm names it"),
    ("slurm.nodelist", "string", "", "SLURM_JOB_NODELIST (or SLURM_NODELIST): the job's nodes, compressed form"),
    ("slurm.num_nodes", "number", "count", "SLURM_JOB_NUM_NODES (or SLURM_NNODES)"),
    ("slurm.localid", "number", "", "SLURM_LOCALID: the task's index on its node"),
    ("slurm.procid", "number", "", "SLURM_PROCID: the task's global rank"),
    ("slurm.ntasks", "number", "count", "SLURM_NTASKS (or SLURM_NPROCS)"),
    ("slurm.gpus", "string", "", "GPUs Slurm gave the job: SLURM_JOB_GPUS, SLURM_STEP_GPUS, else CUDA_VISIBLE_DEVICES inside a job"),
]

FACTS = [
    ("env.var.*", "string", "", "the value of one environment variable, as set (secrets included; redacted at export)"),
    ("env.names", "list", "", "names of all variables, sorted"),
    ("env.count", "number", "count", "number of variables"),
    ("env.format", "string", "", "how the input was written: environ (NUL-separated), env (lines) or export (shell)"),
    ("env.nccl", "dict", "", "NCCL_* variables"),
    ("env.ucx", "dict", "", "UCX_* variables"),
    ("env.nvshmem", "dict", "", "NVSHMEM_* variables"),
    ("env.cuda", "dict", "", "CUDA_* variables and NVIDIA_VISIBLE_DEVICES"),
    ("env.slurm", "dict", "", "SLURM_* and SLURMD_* variables"),
    ("env.container_markers", "list", "", "names that container runtimes set: ENROOT_*, PYXIS_*, container, KUBERNETES_SERVICE_HOST, SINGULARITY_*, APPTAINER_*"),
    ("env.secret_names", "list", "", "names that look like secrets (TOKEN, SECRET, PASSWORD, API_KEY...): redact these on export"),
    ("nccl.topo_file.env", "string", "", "NCCL_TOPO_FILE as set in the environment; absent when unset"),
    ("nccl.ib_qps_per_connection", "number", "", "NCCL_IB_QPS_PER_CONNECTION (NCCL default 1); absent when unset or not an integer"),
    ("nccl.ib_hca", "string", "", "NCCL_IB_HCA (which HCAs/ports NCCL may use); absent when unset"),
    ("nccl.debug", "string", "", "NCCL_DEBUG level; absent when unset"),
    *SLURM_FACTS,
]


def split_environ(text: str) -> tuple[list[tuple[str, str]], str]:
    """``(name, value)`` pairs in input order, and the format name. Raises :class:`ParseError`."""
    if not text or not text.strip("\x00 \t\r\n"):
        raise ParseError("empty input: expected an environment (env, or cat /proc/PID/environ)")
    if "\x00" in text:
        pairs = []
        for entry in text.split("\x00"):
            entry = entry.replace("\r\n", "\n")
            name, eq, value = entry.partition("=")
            if eq and _NAME_RX.fullmatch(name):
                pairs.append((name, value))
        if not pairs:
            raise ParseError("NUL-separated input holds no NAME=value entries")
        return pairs, "environ"
    return _split_lines(strip_noise(text))


def _split_lines(text: str) -> tuple[list[tuple[str, str]], str]:
    pairs: list[list[str]] = []
    exported = 0
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        stripped = line.strip()
        m = _EXPORT.match(stripped)
        if m:
            exported += 1
            name, value = m.group(1), m.group(2)
            if value is None:
                continue  # declare -x NAME: exported, no value, not in the environment
            if value[:1] in ("'", '"') and not _closed(value):
                while i < len(lines) and not _closed(value):
                    value += "\n" + lines[i]
                    i += 1
            pairs.append([name, _unquote(value)])
            continue
        m = _ASSIGN.match(line)
        if m:
            pairs.append([m.group(1), m.group(2)])
            continue
        if not pairs or _PROMPT.match(line) or OTHER_PROGRAM.match(line):
            continue  # text before the first variable, a pasted prompt, a launcher's stderr line
        if stripped or (i < len(lines) and not _ASSIGN.match(lines[i]) and lines[i].strip()):
            pairs[-1][1] += "\n" + line  # a multi-line value continues
    # a value continued by trailing blank lines: trim what the paste added
    out = [(n, v.rstrip("\n") if "\n" in v else v) for n, v in pairs]
    if not out:
        raise ParseError("no NAME=value lines found (expected env output or /proc/PID/environ)")
    return out, "export" if exported and exported >= len(out) / 2 else "env"


def _closed(value: str) -> bool:
    """The shell word ends outside any quote ('it'\\''s' and "a \\"b\\"" are closed)."""
    quote, escaped = "", False
    for ch in value:
        if escaped:
            escaped = False
        elif quote == "'":
            if ch == "'":
                quote = ""
        elif ch == "\\":
            escaped = True
        elif quote == '"':
            if ch == '"':
                quote = ""
        elif ch in "'\"":
            quote = ch
    return not quote


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return re.sub(r'\\([\\"$`])', r"\1", value[1:-1])
    if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
        return value[1:-1].replace("'\\''", "'")
    if value.startswith("$'") and value.endswith("'") and len(value) >= 3:
        return re.sub(r"\\([nrtabefv\\'\"])", lambda m: _ANSI_C[m.group(1)], value[2:-1])
    return value


_ANSI_C = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v",
           "\\": "\\", "'": "'", '"': '"'}


def slurm_facts(env: dict[str, str]) -> dict[str, object]:
    """The slurm.* facts from an environment (shared with the slurm-env parser)."""
    f: dict[str, object] = {}
    job = env.get("SLURM_JOB_ID", env.get("SLURM_JOBID"))
    step = env.get("SLURM_STEP_ID", env.get("SLURM_STEPID"))
    f["slurm.in_job"] = bool(job)
    f["slurm.in_step"] = bool(step)
    if job:
        f["slurm.job_id"] = job
    if step:
        f["slurm.step_id"] = step
    for fact, names in (("slurm.node", ("SLURMD_NODENAME",)), ("slurm.nodelist", ("SLURM_JOB_NODELIST", "SLURM_NODELIST"))):
        for n in names:
            if env.get(n):
                f[fact] = env[n]
                break
    for fact, names in (
        ("slurm.num_nodes", ("SLURM_JOB_NUM_NODES", "SLURM_NNODES")),
        ("slurm.localid", ("SLURM_LOCALID",)),
        ("slurm.procid", ("SLURM_PROCID",)),
        ("slurm.ntasks", ("SLURM_NTASKS", "SLURM_NPROCS")),
    ):
        for n in names:
            v = env.get(n, "").strip()
            if v.isdigit():
                f[fact] = int(v)
                break
    for n in ("SLURM_JOB_GPUS", "SLURM_STEP_GPUS"):
        if env.get(n):
            f["slurm.gpus"] = env[n]
            break
    else:
        if job and "CUDA_VISIBLE_DEVICES" in env:
            f["slurm.gpus"] = env["CUDA_VISIBLE_DEVICES"]
    return f


def _prefixed(env: dict[str, str], *prefixes: str, extra: tuple[str, ...] = ()) -> dict[str, str]:
    return {k: v for k, v in sorted(env.items()) if k.startswith(prefixes) or k in extra}


def _looks_like_env_lines(text: str) -> tuple[float, list[str]]:
    lines = [ln for ln in strip_noise(text).split("\n") if ln.strip()]
    if not lines:
        return 0.0, []
    names = []
    for ln in lines:
        m = _ASSIGN.match(ln) or _EXPORT.match(ln.strip())
        if m:
            names.append(m.group(1))
    return len(names) / len(lines), names


# os-release(5)'s fields: a `cat /etc/os-release` is KEY=VALUE lines too, and no process environment has these names
_OS_RELEASE = frozenset("NAME VERSION ID ID_LIKE PRETTY_NAME VERSION_ID VERSION_CODENAME BUILD_ID VARIANT VARIANT_ID "
                        "HOME_URL SUPPORT_URL BUG_REPORT_URL PRIVACY_POLICY_URL DOCUMENTATION_URL ANSI_COLOR CPE_NAME "
                        "LOGO PLATFORM_ID UBUNTU_CODENAME DEBIAN_CODENAME REDHAT_SUPPORT_PRODUCT "
                        "REDHAT_SUPPORT_PRODUCT_VERSION REDHAT_BUGZILLA_PRODUCT REDHAT_BUGZILLA_PRODUCT_VERSION "
                        "SUPPORT_END IMAGE_ID IMAGE_VERSION DEFAULT_HOSTNAME".split())
_OS_RELEASE_NEEDS = frozenset(("PRETTY_NAME", "ID", "VERSION_ID"))
_LOGFMT = re.compile(r"(?m)^[^\S\n]*(?:\S.{0,80}?\s)?time=\S+ level=[A-Z]+ (?:source=\S+ )?msg=")


def _detect(text: str) -> float:
    if "\x00" in text:
        entries = [e for e in text.split("\x00") if e.strip()]
        good = sum(1 for e in entries if _NAME_EQ.match(e))
        return 0.95 if entries and good / len(entries) > 0.8 else 0.0
    head = text.lstrip()[:200]
    if head.startswith("#@ ") or "\n==> " in text[:4096] or head.startswith("==> "):
        return 0.05  # our probes' marker output, nccl-conf's file headers
    if _LOGFMT.search(text[:65536]):
        return 0.05  # a Go program's log line (time=... level=INFO source=... msg="..."), one line or many
    ratio, names = _looks_like_env_lines(text)
    if ratio < 0.6 or not names:
        return round(ratio * 0.4, 2)
    if len(names) >= 3 and len(set(names)) <= len(names) // 2:
        # one name on most lines ("time=... level=INFO msg=..."): a key=value log (logfmt), not an environment,
        # where each variable is listed once
        return 0.05
    if _OS_RELEASE_NEEDS.issubset(names) and sum(n in _OS_RELEASE for n in names) >= 0.8 * len(names):
        return 0.05  # cat /etc/os-release: the distribution's name and version, not an environment
    if all(n.startswith(("SLURM_", "SLURMD_")) for n in names):
        return 0.6  # env | grep SLURM: slurm-env says 0.9
    if all(n.startswith("NCCL_") for n in names) and re.search(r"^#", text, re.M):
        return 0.5  # an nccl.conf with comments
    score = 0.7 + 0.1 * ratio
    if any(n in _COMMON for n in names):
        score += 0.15
    return min(score, 0.95)


@parser(
    "env",
    detect=_detect,
    summary="process environment (env output, /proc/PID/environ, export -p / declare -x)",
    facts=FACTS,
    command="cat /proc/PID/environ | tr '\\0' '\\n'   (or: env)",
)
def parse(text: str) -> dict[str, object]:
    pairs, fmt = split_environ(text)
    env: dict[str, str] = {}
    for name, value in pairs:
        env[name] = value  # a name given twice: the last wins, as in a shell
    f: dict[str, object] = {f"env.var.{k}": v for k, v in env.items()}
    f["env.names"] = sorted(env)
    f["env.count"] = len(env)
    f["env.format"] = fmt
    f["env.nccl"] = _prefixed(env, "NCCL_")
    f["env.ucx"] = _prefixed(env, "UCX_")
    f["env.nvshmem"] = _prefixed(env, "NVSHMEM_")
    f["env.cuda"] = _prefixed(env, "CUDA_", extra=("NVIDIA_VISIBLE_DEVICES",))
    f["env.slurm"] = _prefixed(env, "SLURM_", "SLURMD_")
    f["env.container_markers"] = sorted(
        k for k in env
        if k.startswith(("ENROOT_", "PYXIS_", "SINGULARITY_", "APPTAINER_")) or k in ("container", "KUBERNETES_SERVICE_HOST")
    )
    f["env.secret_names"] = sorted(k for k in env if _SECRET.search(k))
    if "NCCL_TOPO_FILE" in env:
        f["nccl.topo_file.env"] = env["NCCL_TOPO_FILE"]
    qps = env.get("NCCL_IB_QPS_PER_CONNECTION", "").strip()
    if re.fullmatch(r"[0-9]+", qps):
        f["nccl.ib_qps_per_connection"] = int(qps)
    if "NCCL_IB_HCA" in env:
        f["nccl.ib_hca"] = env["NCCL_IB_HCA"]
    if "NCCL_DEBUG" in env:
        f["nccl.debug"] = env["NCCL_DEBUG"]
    f.update(slurm_facts(env))
    return f
