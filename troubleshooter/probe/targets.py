"""Targets: where sources run. The same source and parser code path serves every target.

- :class:`LocalTarget`: this process's own context.
- :class:`ExecTarget`: inside a container or any wrapper given as an argv prefix
  (``docker exec trainer``, ``enroot exec PID``, ``bwrap ...``).
- :class:`SlurmTarget`: inside a running Slurm job, as an overlapping step
  (``srun --jobid J --overlap [-w NODE] [--container-name C]``), optionally composed with a wrapper.
- :class:`BundleTarget`: replays what a bundle captured.
"""

from __future__ import annotations

import re
import shlex
import time
from typing import Any, Sequence

from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.probe.runner import run_command
from troubleshooter.sources.base import Params, Source

# Started by srun with --export=NONE so the step sees the job's context, not the caller's shell
# environment; a fixed PATH makes the probes' binaries resolve.
STEP_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Target:
    kind = "abstract"
    label = ""
    is_live = True
    cancel = None  # a threading.Event; set: running commands are killed and report "cancelled"
    gone = ""  # set when the target went away during a run (a Slurm job that ended): why, in words
    lost: Sequence[str] = ()  # the sources that could not run or finish because it went away
    on_output = None  # callable(source_id, bytes): live output, for a UI that streams it

    def run(self, src: Source, params: Params) -> Evidence:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label}

    def _skip(self, src: Source, reason: str) -> Evidence:
        return Evidence(src.id, Status.SKIPPED, reason=reason, started_at=time.time(), target=self.label)


class _CommandTarget(Target):
    """A target that runs a source's argv, possibly behind a prefix."""

    prefix: list[str] = []
    extra_timeout = 0.0
    #: the prefix hands the command to a remote shell as one string (ssh): each argument is quoted for it
    remote_shell = False

    def wrap(self, argv: list[str], src: Source) -> list[str]:
        if src.env:
            argv = ["env", *(f"{k}={v}" for k, v in src.env), *argv]
        return [*self.prefix, *self.for_shell(argv)]

    def for_shell(self, argv: list[str]) -> list[str]:
        """``argv`` as the command behind the prefix: as is, or, when a remote shell parses it (ssh joins
        its arguments with spaces and the remote shell splits them again, so a ``--steps-log 'x; cmd'``
        value would run ``cmd``), one string with every argument quoted for a POSIX shell."""
        return [shlex.join(argv)] if self.remote_shell and argv else argv

    def run_env(self, src: Source) -> dict[str, str] | None:
        """Environment for the subprocess itself; wrapped targets put the source's env in the argv instead."""
        return None

    def run(self, src: Source, params: Params) -> Evidence:
        missing = src.missing_params(params)
        if missing:
            return self._skip(src, _missing_reason(missing))
        if src.func is not None and not src.argv:
            if self.kind != "local":
                return self._skip(src, "in-process query: runs on the local target only")
            return src.func(params)
        argv = self.wrap(src.render_argv(params), src)
        ev = run_command(
            argv,
            source_id=src.id,
            timeout=src.timeout_s + self.extra_timeout,
            max_bytes=src.max_bytes,
            keep=src.keep,
            cancel=self.cancel,
            on_output=(lambda chunk, _sid=src.id: self.on_output(_sid, chunk)) if self.on_output else None,
            accept_rc=src.accept_rc,
            env=self.run_env(src),
            target=self.label,
        )
        if ev.status is Status.NOT_INSTALLED and src.needs:
            where = "" if self.kind == "local" else f" in {self.label}"
            hint = f" (package {src.package})" if src.package else ""
            ev.reason = f"{src.needs} is not installed{where}{hint}"
        elif ev.status is Status.PERMISSION_DENIED and src.root:
            ev.reason = _root_hint(ev.reason)
        return ev


class LocalTarget(_CommandTarget):
    kind = "local"

    def __init__(self) -> None:
        self.prefix = []
        import os

        if hasattr(os, "uname"):  # what gethostname(2) returns; importing socket for it was ~3 ms of start-up
            host = os.uname().nodename
        else:  # pragma: no cover
            import socket

            host = socket.gethostname()
        self.label = f"local ({host})"

    def wrap(self, argv: list[str], src: Source) -> list[str]:
        return argv  # env is passed to the subprocess directly (run_env)

    def run_env(self, src: Source) -> dict[str, str] | None:
        return dict(src.env)


class ExecTarget(_CommandTarget):
    kind = "exec"
    extra_timeout = 5.0

    def __init__(self, prefix: str | Sequence[str]) -> None:
        self.prefix = shlex.split(prefix) if isinstance(prefix, str) else list(prefix)
        if not self.prefix:
            raise ValueError("--exec needs a command prefix, e.g. 'docker exec trainer'")
        self.label = f"exec: {shlex.join(self.prefix)}"
        self.runtime = _guess_runtime(self.prefix)
        self.remote_shell = self.runtime == "ssh"

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "prefix": self.prefix, "runtime": self.runtime}


# srun's own launch failures (not a task's exit): the step never ran. "Slurm job J has expired" is what
# srun says once the job has ended (its rc 1 must not pass as a source's accepted "no match" exit).
_SRUN_LAUNCH_ERROR = re.compile(
    r"^srun: error: .*(Unable to confirm allocation|Invalid job id|Job has expired|job \S+ has expired|"
    r"already completed|Unable to create step|Invalid node name|Requested node configuration is not available|"
    r"Unable to allocate resources|Job/step already completing or completed).*$",
    re.MULTILINE | re.IGNORECASE,
)
# the job ended (scancel, time limit, node failure, preemption) while the step ran: slurmstepd says so
_STEP_ENDED = re.compile(r"^slurmstepd\S*: error: \*\*\* (?:STEP|JOB) \S+ ON \S+ CANCELLED AT .*$", re.MULTILINE)


class SlurmTarget(_CommandTarget):
    kind = "slurm"
    extra_timeout = 15.0  # srun launch

    def __init__(
        self,
        job: str,
        node: str | None = None,
        container_name: str | None = None,
        wrapper: str | Sequence[str] | None = None,
    ) -> None:
        if not str(job).strip() or not str(job).replace("_", "").replace(".", "").isalnum():
            raise ValueError(f"not a Slurm job id: {job!r}")
        self.job, self.node, self.container_name = str(job), node, container_name
        self.lost: list[str] = []
        self.wrapper = (shlex.split(wrapper) if isinstance(wrapper, str) else list(wrapper)) if wrapper else []
        prefix = ["srun", f"--jobid={self.job}", "--overlap", "--nodes=1", "--ntasks=1", "--quiet", "--export=NONE"]
        if node:
            prefix.append(f"--nodelist={node}")
        if container_name:
            prefix.append(f"--container-name={container_name}")
        self.prefix = prefix + ["/usr/bin/env", f"PATH={STEP_PATH}"] + self.wrapper
        self.remote_shell = bool(self.wrapper) and _guess_runtime(self.wrapper) == "ssh"
        bits = [f"slurm job {self.job}"]
        if node:
            bits.append(f"node {node}")
        if container_name:
            bits.append(f"container {container_name}")
        if self.wrapper:
            bits.append(f"via {shlex.join(self.wrapper)}")
        self.label = ", ".join(bits)

    def wrap(self, argv: list[str], src: Source) -> list[str]:
        env = [f"{k}={v}" for k, v in src.env]
        if env and not self.wrapper:
            return [*self.prefix, *env, *argv]  # /usr/bin/env is already in the prefix
        if env:
            return [*self.prefix, *self.for_shell(["env", *env, *argv])]
        return [*self.prefix, *self.for_shell(argv)]

    def run(self, src: Source, params: Params) -> Evidence:
        ev = super().run(src, params)
        # srun itself failed to start the step (no such job, job ended, no such node): that is an error of
        # the target, whatever exit codes the source accepts from its own command.
        if ev.argv and ev.rc not in (None, 0) and ev.status is not Status.TIMED_OUT:
            m = _SRUN_LAUNCH_ERROR.search(ev.stderr_text)
            ended = _STEP_ENDED.search(ev.stderr_text)
            if m:
                ev.status = Status.ERROR
                ev.reason = m.group(0).strip()
                if re.search(r"(?i)expired|already complet", ev.reason):
                    self.gone = self.gone or f"job {self.job} has ended"
                    self.lost.append(src.id)  # list.append: safe from the probe threads
            elif ev.status not in (Status.CANCELLED, Status.OK):
                # srun relays slurmstepd's "*** STEP ... CANCELLED AT ..." line, but not always: a loaded
                # srun killed with its step may print only "task 0: Terminated", or nothing. The job's own
                # state from slurmctld decides then, so a step that died with its job never reads as a
                # probe's plain failure (and the check as complete).
                state = "" if ended else self._ended_state()
                if ended or state:
                    why = ended.group(0).strip() if ended else f"JobState={state}"
                    ev.status = Status.ERROR
                    ev.reason = f"job {self.job} ended while this probe ran ({why})"
                    self.gone = self.gone or f"job {self.job} ended during the run"
                    self.lost.append(src.id)  # list.append: safe from the probe threads
        return ev

    def _ended_state(self, settle_s: float = 3.0) -> str:
        """The job's state when it is no longer running (``CANCELLED``, ``COMPLETED``, ``GONE`` when slurmctld
        no longer knows it), "" while it runs or when Slurm cannot be asked. ``COMPLETING`` (the job is ending, its
        epilog running) is waited on for up to ``settle_s``: the state it ends in says why (cancelled, timed out)."""
        deadline = time.monotonic() + settle_s
        while True:
            state = self._job_state()
            if state != "COMPLETING" or time.monotonic() >= deadline:
                return state
            time.sleep(0.25)

    def _job_state(self) -> str:
        ev = run_command(["scontrol", "show", "job", self.job, "-o"], source_id="slurm-job-state", timeout=5.0,
                         accept_rc=(0, 1))
        if ev.rc == 1 and "Invalid job id" in ev.stderr_text:
            return "GONE"
        m = re.search(r"\bJobState=(\S+)", ev.text)
        if not m or m.group(1) in ("RUNNING", "PENDING", "SUSPENDED", "CONFIGURING", "RESIZING", "REQUEUED"):
            return ""
        return m.group(1)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "job": self.job,
            "node": self.node,
            "container_name": self.container_name,
            "wrapper": self.wrapper,
        }


class BundleTarget(Target):
    kind = "bundle"
    is_live = False

    def __init__(self, bundle: "Bundle", side: str = "target") -> None:  # noqa: F821
        self.bundle = bundle
        self.side = side
        captured = bundle.target_info(side)
        self.label = f"bundle {bundle.name}" + (f" [{side}]" if side != "target" else "") + (
            f" (captured on {captured.get('label', '?')})" if captured else ""
        )

    def run(self, src: Source, params: Params) -> Evidence:
        ev = self.bundle.evidence(src.id, side=self.side)
        if ev is None:
            return Evidence(src.id, Status.NOT_CAPTURED, reason="not in this bundle", target=self.label)
        return ev

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "path": str(self.bundle.path), "side": self.side,
                "captured": self.bundle.target_info(self.side)}


def _guess_runtime(prefix: list[str]) -> str:
    head = prefix[0].rsplit("/", 1)[-1]
    known = {"docker": "docker", "podman": "podman", "enroot": "enroot", "kubectl": "kubernetes",
             "bwrap": "bubblewrap", "nerdctl": "containerd", "crictl": "cri", "singularity": "apptainer",
             "apptainer": "apptainer", "srun": "slurm", "nsenter": "nsenter", "unshare": "unshare",
             "ssh": "ssh"}
    return known.get(head, head)


def make_target(
    *,
    bundle: str | None = None,
    job: str | None = None,
    node: str | None = None,
    container_name: str | None = None,
    exec_prefix: str | None = None,
    side: str = "target",
) -> Target:
    """The target the CLI and TUI options name (bundle, job [+ wrapper], wrapper, else local)."""
    if bundle:
        from troubleshooter.probe.bundle import Bundle

        return BundleTarget(Bundle.open(bundle), side=side)
    if job:
        return SlurmTarget(job, node=node, container_name=container_name, wrapper=exec_prefix)
    if node or container_name:
        raise ValueError("--node and --container-name need --job")
    if exec_prefix:
        return ExecTarget(exec_prefix)
    return LocalTarget()


_PARAM_HELP = {
    "pid": "--pid PID (the training process)",
    "job": "--job J",
    "nccl_log": "an NCCL_DEBUG=INFO log (--nccl-log FILE)",
    "steps_log": "a training log with step times (--steps-log FILE)",
}


def _missing_reason(missing: list[str]) -> str:
    return "needs " + ", ".join(_PARAM_HELP.get(m, f"--{m.replace('_', '-')}") for m in missing)


def _root_hint(reason: str) -> str:
    """Permission denied for a source that needs privilege: say what to do, without assuming we lack root."""
    import os

    hint = "needs a capability this context lacks (e.g. CAP_SYS_RESOURCE, CAP_PERFMON, MSR access)" \
        if os.geteuid() == 0 else "run as root"
    return f"{reason}: {hint}" if reason else hint
