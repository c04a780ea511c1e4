"""Resource limits a job inherits: what often differs between the host and the job's container.

Locked memory (``ulimit -l``: RDMA registers buffers with it; a container started with the runtime's default
64 KiB makes ``ibv_reg_mr`` fail or NCCL fall back), open files, and the size of ``/dev/shm`` (NCCL's
intra-node shared-memory transport; Docker's default is 64 MiB). The CPU affinity list is read by
``proc-status-self``.

The script is fixed text: it reads the limits of the shell it runs in (a job step, a container) and no
value is ever interpolated into it.
"""

from troubleshooter.sources.base import source

# (No braces in the script: Source.render_argv treats {name} as a placeholder.)
LIMITS_SCRIPT = r"""
printf '#@ limits 1\n'
printf 'memlock_soft=%s\n' "$(ulimit -S -l 2>/dev/null || echo -)"
printf 'memlock_hard=%s\n' "$(ulimit -H -l 2>/dev/null || echo -)"
printf 'nofile_soft=%s\n' "$(ulimit -S -n 2>/dev/null || echo -)"
printf 'nofile_hard=%s\n' "$(ulimit -H -n 2>/dev/null || echo -)"
printf 'stack_soft=%s\n' "$(ulimit -S -s 2>/dev/null || echo -)"
if [ -d /dev/shm ]; then
  printf 'shm_present=1\n'
  printf 'shm_fstype=%s\n' "$(stat -f -c %T /dev/shm 2>/dev/null || echo -)"
  printf 'shm_df=%s\n' "$(df -kP /dev/shm 2>/dev/null | tail -n 1)"
else
  printf 'shm_present=0\n'
fi
exit 0
"""

source(
    id="limits",
    parser="limits",
    family="runtime",
    argv=["sh", "-c", LIMITS_SCRIPT],
    timeout_s=5,
    summary="resource limits of this context: locked memory, open files, /dev/shm size",
    why="RDMA needs a large locked-memory limit (ulimit -l unlimited) and NCCL's shared-memory transport "
    "needs a large /dev/shm; containers often get small defaults (64 KiB memlock, 64 MiB shm) the host "
    "does not have.",
)
