"""Run one command as a real subprocess, bounded in time and output, and classify how it went.

argv lists only (never a shell string); a new process session so a timeout or a cancel kills the whole
group, and a tag in the environment so a descendant that left the group (setsid) is killed too;
output over ``max_bytes`` is kept truncated with a marker while the rest is drained and counted.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from typing import Callable, Mapping, Sequence

from troubleshooter.model.evidence import Evidence, Status

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
TRUNCATION_MARKER = b"\n[troubleshooter: output truncated at %d bytes; %d bytes in all]\n"

# Wrappers (srun, docker exec, bwrap, sh) report a missing binary in their own words and exit codes.
_NOT_FOUND = re.compile(
    rb"(execv\w*\(?\)?:? .*No such file or directory|executable file not found|"
    rb"command not found|: not found$|No such file or directory \(os error 2\))",
    re.MULTILINE,
)
_PERMISSION = re.compile(
    rb"(Permission denied|Operation not permitted|must be root|requires root|not permitted|"
    rb"Access denied|insufficient privileges|You need to be root|are you root|perf_event_paranoid)",
    re.IGNORECASE,
)


def _group_alive(pgid: int) -> bool:
    """Some process of the group still runs (zombies waiting for their reaper do not count)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False


#: every probe's environment carries a tag of its own: a descendant that left the probe's session and
#: group (setsid, a double fork) still carries it, so it is found and killed with the probe
TAG_VAR = "TROUBLESHOOTER_PROBE_TAG"


def _tagged_pids(tag: str) -> list[int]:
    """The live processes whose environment holds this probe's tag (readable: this user's own)."""
    if not tag:
        return []
    needle = f"{TAG_VAR}={tag}".encode()
    me = os.getpid()
    out = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for e in entries:
        if not e.isdigit() or int(e) == me:
            continue
        try:
            with open(f"/proc/{e}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            out.append(int(e))
    return out


def _kill_group(proc: subprocess.Popen, tag: str = "") -> None:
    # start_new_session: the group id is the leader's pid, still valid after the leader exited (a daemon
    # child holding the pipes); os.getpgid(proc.pid) would fail then and leave the child running.
    # Descendants that called setsid are in neither the group nor the session: found by their tag.
    pgid = proc.pid
    for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 2.0)):
        strays = _tagged_pids(tag)
        try:
            os.killpg(pgid, sig)
            group = True
        except (ProcessLookupError, PermissionError):
            group = False
        for pid in strays:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        if not group and not strays:
            return
        deadline = time.monotonic() + wait
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        while time.monotonic() < deadline:
            if not _group_alive(pgid) and not _tagged_pids(tag):
                return
            time.sleep(0.05)


# every probe running now, so an exit path (the app quitting mid-sweep) can end them all at once
_running: dict[int, tuple[subprocess.Popen, str]] = {}
_running_lock = threading.Lock()


def kill_running() -> int:
    """Kill the whole tree of every probe this process is running now; returns how many there were."""
    with _running_lock:
        items = list(_running.values())
    for proc, tag in items:
        _kill_group(proc, tag)
    return len(items)


def last_line(data: bytes, limit: int = 240) -> str:
    for line in reversed(data.decode("utf-8", errors="replace").strip().splitlines()):
        line = line.strip()
        if line:
            return line[:limit]
    return ""


def _feed(stream, data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except OSError:
        pass


class _Sink:
    """One output pipe: what is kept (the head, or the tail for ``keep="tail"``) and how much came in all."""

    __slots__ = ("stream", "fd", "cap", "chunks", "total", "tail", "on_output", "kept", "ring")

    def __init__(self, stream, cap: int, tail: bool = False, on_output=None) -> None:
        self.stream, self.fd, self.cap, self.tail, self.on_output = stream, stream.fileno(), cap, tail, on_output
        self.chunks: list[bytes] = []
        self.total = self.kept = 0
        self.ring = bytearray()

    def take(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.on_output is not None:
            try:
                self.on_output(chunk)
            except Exception:  # a display callback must never break the capture
                self.on_output = None
        if self.tail:
            self.ring += chunk
            if len(self.ring) > 2 * self.cap:
                del self.ring[: len(self.ring) - self.cap]
        elif self.kept < self.cap:
            piece = chunk[: self.cap - self.kept]
            self.chunks.append(piece)
            self.kept += len(piece)

    def close(self) -> None:
        if self.tail:
            ring = self.ring
            self.chunks.append(bytes(ring[-self.cap:]) if len(ring) > self.cap else bytes(ring))
            self.tail = False
        try:
            self.stream.close()
        except OSError:
            pass

    def data(self) -> bytes:
        return b"".join(self.chunks)


def _pump(proc: subprocess.Popen, tag: str, timeout: float, cancel, *sinks: _Sink) -> tuple[bool, bool]:
    """Read both pipes and wait for the command in this thread, with one epoll: (timed_out, cancelled).

    A sweep runs ~25 commands at once; three threads per command (two readers and a reaper) cost the
    sweep ~20-40% of its wall time on 2 cores in thread start-up and GIL hand-offs. The command's exit is
    seen through a pidfd (Linux 5.3+), else by polling every 20 ms. Once it exited, children that keep the
    pipes open get 2 s, then the group is killed and the pipes read for 1 s more.
    """
    import selectors

    sel = selectors.DefaultSelector()
    open_sinks = {}
    for sk in sinks:
        sel.register(sk.fd, selectors.EVENT_READ, sk)
        open_sinks[sk.fd] = sk
    pidfd = -1
    try:
        pidfd = os.pidfd_open(proc.pid)
        sel.register(pidfd, selectors.EVENT_READ, None)
    except (AttributeError, OSError):
        pidfd = -1
    timed_out = cancelled = exited = killed_strays = False
    deadline = time.monotonic() + timeout
    drain_until = None
    try:
        while open_sinks or not exited:
            now = time.monotonic()
            if not exited:
                if now >= deadline:
                    timed_out = True
                elif cancel is not None and cancel.is_set():
                    cancelled = True
                if timed_out or cancelled:
                    _kill_group(proc, tag)
                    exited = True
                    drain_until = time.monotonic() + 2.0
                    continue
                wait = deadline - now
                if cancel is not None:
                    wait = min(wait, 0.2)
                if pidfd < 0:
                    wait = min(wait, 0.02)
            else:
                if drain_until is None:
                    drain_until = now + 2.0
                if now >= drain_until:
                    if killed_strays or not open_sinks:
                        break
                    _kill_group(proc, tag)  # children that kept the pipe open after the parent exited
                    killed_strays = True
                    drain_until = time.monotonic() + 1.0
                    continue
                wait = drain_until - now
            for key, _ in sel.select(max(wait, 0.0)):
                sk = key.data
                if sk is None:  # the pidfd: the command exited
                    sel.unregister(pidfd)
                    proc.wait()
                    exited = True
                    continue
                try:
                    chunk = os.read(sk.fd, 65536)
                except OSError:
                    chunk = b""
                if chunk:
                    sk.take(chunk)
                else:
                    sel.unregister(sk.fd)
                    del open_sinks[sk.fd]
                    sk.close()
            if pidfd < 0 and not exited and proc.poll() is not None:
                exited = True
    finally:
        for sk in open_sinks.values():
            try:
                sel.unregister(sk.fd)
            except (KeyError, ValueError):
                pass
            sk.close()
        sel.close()
        if pidfd >= 0:
            os.close(pidfd)
        if proc.returncode is None:
            try:
                proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
    return timed_out, cancelled


def run_command(
    argv: Sequence[str],
    *,
    source_id: str = "",
    timeout: float = 10.0,
    max_bytes: int = DEFAULT_MAX_BYTES,
    env: Mapping[str, str] | None = None,
    accept_rc: Sequence[int] = (0,),
    target: str = "local",
    stdin: bytes | None = None,
    keep: str = "head",
    cancel: "threading.Event | None" = None,
    on_output: "Callable[[bytes], None] | None" = None,
) -> Evidence:
    argv = [str(a) for a in argv]
    started = time.time()
    t0 = time.monotonic()
    base = dict(source_id=source_id, argv=argv, started_at=started, target=target)
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    tag = f"{os.getpid()}-{os.urandom(8).hex()}"  # secrets.token_hex(8) is this; importing secrets cost ~4 ms
    full_env[TAG_VAR] = tag
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=full_env,
            close_fds=True,
        )
    except FileNotFoundError:
        return Evidence(status=Status.NOT_INSTALLED, rc=127, reason=f"{argv[0]} is not installed (not on PATH)", **base)
    except PermissionError as exc:
        return Evidence(status=Status.CANNOT_RUN, rc=126, reason=f"{argv[0]} cannot be executed: {exc.strerror}", **base)
    except OSError as exc:
        return Evidence(status=Status.ERROR, reason=f"could not start {argv[0]}: {exc}", **base)

    with _running_lock:
        _running[proc.pid] = (proc, tag)
    if stdin is not None and proc.stdin is not None:
        # fed from a thread: a child that writes before it has read all its input must not stall on us
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
    out = _Sink(proc.stdout, max_bytes, keep == "tail", on_output)
    err = _Sink(proc.stderr, 256 * 1024)
    timed_out, cancelled = _pump(proc, tag, timeout, cancel, out, err)
    with _running_lock:
        _running.pop(proc.pid, None)
    duration = time.monotonic() - t0
    stdout = out.data()
    stderr = err.data()
    truncated = out.total > max_bytes
    if truncated:
        if keep == "tail":
            cut = stdout.find(b"\n")  # start on a whole line
            stdout = (TRUNCATION_MARKER % (max_bytes, out.total)).lstrip(b"\n") + stdout[cut + 1:]
        else:
            stdout += TRUNCATION_MARKER % (max_bytes, out.total)
    rc = proc.returncode
    ev = Evidence(
        status=Status.OK,
        stdout=stdout,
        stderr=stderr,
        rc=rc,
        duration_s=duration,
        truncated=truncated,
        stdout_bytes=out.total,
        **base,
    )
    if cancelled:
        ev.status = Status.CANCELLED
        ev.reason = f"cancelled by the user after {duration:.1f}s"
        return ev
    if timed_out:
        ev.status = Status.TIMED_OUT
        ev.rc = 124
        ev.reason = f"killed after {timeout:g}s timeout"
        return ev
    return classify(ev, accept_rc)


def classify(ev: Evidence, accept_rc: Sequence[int] = (0,)) -> Evidence:
    """Set status and reason from rc and stderr (also used for evidence read back from a wrapper)."""
    rc = ev.rc
    if rc in accept_rc:
        ev.status = Status.OK
        return ev
    name = ev.argv[0] if ev.argv else "command"
    tail = last_line(ev.stderr) or last_line(ev.stdout)
    if rc == 127 or (rc != 0 and _NOT_FOUND.search(ev.stderr)):
        ev.status = Status.NOT_INSTALLED
        ev.reason = tail or f"{name}: not found"
    elif rc == 126:
        ev.status = Status.CANNOT_RUN
        ev.reason = tail or f"{name}: cannot execute"
    elif rc is not None and rc < 0:
        ev.status = Status.ERROR
        try:
            ev.reason = f"killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            ev.reason = f"killed by signal {-rc}"
    elif _PERMISSION.search(ev.stderr) or _PERMISSION.search(ev.stdout[-4096:]):
        ev.status = Status.PERMISSION_DENIED
        ev.reason = tail or "permission denied"
    else:
        ev.status = Status.ERROR
        ev.reason = f"exit {rc}: {tail}" if tail else f"exit {rc}"
    return ev
