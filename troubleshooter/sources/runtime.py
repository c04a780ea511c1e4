"""Runtime context: the environment the probes and the training process see, NCCL's config and topology
file, and whether this context is a container.

Case 4 of the reference cases is decided here: ``NCCL_TOPO_FILE`` set on the host but neither the variable
nor ``/etc/nccl/topo.xml`` reaching the job's container. Run these sources on the host *and* inside the job
(``--job``/``--exec``) and compare.

The shell scripts below are fixed text: they read variables and files on the target at run time, and no
value is ever interpolated into them.
"""

from troubleshooter.sources.base import source

# --- environment ---------------------------------------------------------------------------------------

source(
    id="env-self",
    parser="env",
    family="runtime",
    argv=["cat", "/proc/self/environ"],
    env=(),  # inject nothing: this is the environment the probes (and a job step) really get
    timeout_s=5,
    summary="environment of the probes' own context",
    why="NCCL_*, UCX_*, CUDA_* and SLURM_* variables decide which topology file, HCAs and transport NCCL "
    "uses; inside the job's container they often differ from the host's (NCCL_TOPO_FILE missing: case 4).",
)

source(
    id="env-proc",
    parser="env",
    family="runtime",
    argv=["cat", "/proc/{pid}/environ"],
    env=(),
    timeout_s=5,
    summary="environment of the training process",
    why="the variables the training process was really started with (launchers and containers add and drop "
    "some); another user's process needs root.",
)

# --- NCCL config files -----------------------------------------------------------------------------------

# NCCL reads $NCCL_CONF_FILE if set, else ~/.nccl.conf, then /etc/nccl.conf (misc/param.cc, initEnvFunc).
# (No braces in these scripts: Source.render_argv treats {name} as a placeholder.)
NCCL_CONF_SCRIPT = r"""
u=
if [ -n "$NCCL_CONF_FILE" ]; then u=$NCCL_CONF_FILE
elif [ -n "$HOME" ]; then u=$HOME/.nccl.conf
fi
printf '#@ nccl-conf 1\n'
for f in "$u" /etc/nccl.conf; do
  [ -n "$f" ] || continue
  p=0; r=0
  [ -e "$f" ] && p=1
  [ -f "$f" ] && [ -r "$f" ] && r=1
  printf '#@ checked present=%s readable=%s path=%s\n' "$p" "$r" "$f"
done
for f in "$u" /etc/nccl.conf; do
  [ -n "$f" ] && [ -f "$f" ] && [ -r "$f" ] || continue
  printf '==> %s <==\n' "$f"
  head -c 65536 -- "$f"
  printf '\n'
done
exit 0
"""

source(
    id="nccl-conf",
    parser="nccl-conf",
    family="runtime",
    argv=["sh", "-c", NCCL_CONF_SCRIPT],
    timeout_s=5,
    summary="NCCL config files (~/.nccl.conf, /etc/nccl.conf)",
    why="variables set in /etc/nccl.conf apply to every job on the node without showing in any job script; "
    "a container that does not mount the file loses them.",
)

# --- NCCL topology file ---------------------------------------------------------------------------------

# Resolves the file as ncclTopoGetSystem does: NCCL_TOPO_FILE (environment, else the config files NCCL
# reads), else /var/run/nvidia-topologyd/virtualTopology.xml. Then /etc/nccl/topo.xml, hash only.
TOPO_FILE_SCRIPT = r"""
cap=4194304
printf '#@ nccl-topo-file 1\n'
src=
if [ -n "$NCCL_TOPO_FILE" ] || env | grep -q '^NCCL_TOPO_FILE='; then
  printf '#@ env NCCL_TOPO_FILE=%s\n' "$NCCL_TOPO_FILE"
  p=$NCCL_TOPO_FILE; src=env
else
  printf '#@ env NCCL_TOPO_FILE unset\n'
  u=
  if [ -n "$NCCL_CONF_FILE" ]; then u=$NCCL_CONF_FILE
  elif [ -n "$HOME" ]; then u=$HOME/.nccl.conf
  fi
  for c in "$u" /etc/nccl.conf; do
    [ -n "$c" ] && [ -f "$c" ] && [ -r "$c" ] || continue
    v=$(grep -m 1 '^NCCL_TOPO_FILE=' "$c" 2>/dev/null) || continue
    p=$(printf '%s\n' "$v" | cut -d= -f2-); src=conf
    printf '#@ conf-file %s\n' "$c"
    printf '#@ conf NCCL_TOPO_FILE=%s\n' "$p"
    break
  done
  if [ -z "$src" ]; then p=/var/run/nvidia-topologyd/virtualTopology.xml; src=default; fi
fi
for role in nccl etc; do
  if [ "$role" = nccl ]; then f=$p; s=$src; else f=/etc/nccl/topo.xml; s=fixed; fi
  pr=0; rd=0; n=-; h=-
  [ -e "$f" ] && pr=1
  if [ -f "$f" ] && [ -r "$f" ]; then
    rd=1
    n=$(wc -c < "$f" | tr -d ' ')
    if command -v sha256sum >/dev/null 2>&1; then h=$(sha256sum < "$f" | cut -d ' ' -f 1); fi
  fi
  printf '#@ file role=%s source=%s present=%s readable=%s bytes=%s sha256=%s path=%s\n' "$role" "$s" "$pr" "$rd" "$n" "$h" "$f"
  if [ "$rd" = 1 ] && [ "$role" = nccl ]; then
    head -c "$cap" -- "$f"
    printf '\n#@ end role=%s\n' "$role"
  fi
done
exit 0
"""

source(
    id="nccl-topo-file",
    parser="topo-file-probe",
    family="runtime",
    argv=["sh", "-c", TOPO_FILE_SCRIPT],
    timeout_s=10,
    max_bytes=5 * 1024 * 1024,
    summary="the NCCL topology file NCCL would load here, and its content",
    why="cloud VM images need their topology file: when NCCL_TOPO_FILE or the file does not reach the job's "
    "container, NCCL silently autodetects and AllGather/ReduceScatter run 2-4x slower (case 4).",
)

# --- container detection ----------------------------------------------------------------------------------

CONTAINER_SCRIPT = r"""
printf '#@ container-markers 1\n'
printf 'uid=%s\n' "$(id -u 2>/dev/null || echo -)"
printf 'pid1_comm=%s\n' "$(cat /proc/1/comm 2>/dev/null || echo -)"
printf 'pid1_cgroup=%s\n' "$(cut -d: -f3- /proc/1/cgroup 2>/dev/null | sort -u | tr '\n' ' ')"
printf 'self_cgroup=%s\n' "$(cut -d: -f3- /proc/self/cgroup 2>/dev/null | sort -u | tr '\n' ' ')"
printf 'pid_ns=%s\n' "$(readlink /proc/self/ns/pid 2>/dev/null || echo -)"
printf 'mnt_ns=%s\n' "$(readlink /proc/self/ns/mnt 2>/dev/null || echo -)"
printf 'pid1_mnt_ns=%s\n' "$(readlink /proc/1/ns/mnt 2>/dev/null || echo -)"
for m in dockerenv=/.dockerenv containerenv=/run/.containerenv singularity_d=/.singularity.d etc_enroot=/etc/enroot; do
  k=$(printf '%s\n' "$m" | cut -d= -f1); f=$(printf '%s\n' "$m" | cut -d= -f2-)
  if [ -e "$f" ]; then printf '%s=1\n' "$k"; else printf '%s=0\n' "$k"; fi
done
printf 'run_systemd_container=%s\n' "$(cat /run/systemd/container 2>/dev/null || echo -)"
printf 'env_container=%s\n' "$container"
printf 'env_markers=%s\n' "$(env | cut -d= -f1 | grep -E '^(ENROOT_|PYXIS_|SINGULARITY_|APPTAINER_|KUBERNETES_SERVICE_HOST$|container$)' | sort -u | tr '\n' ' ')"
if command -v systemd-detect-virt >/dev/null 2>&1; then
  printf 'detect_virt=%s\n' "$(systemd-detect-virt -c 2>/dev/null)"
else
  printf 'detect_virt=-\n'
fi
printf 'root_mount=%s\n' "$(sed -n 's/^[^ ]* [^ ]* [^ ]* \([^ ]*\) \/ .* - \([^ ]*\) \([^ ]*\) .*/\1 \2 \3/p' /proc/self/mountinfo 2>/dev/null | head -n 1)"
exit 0
"""

source(
    id="container-markers",
    parser="container",
    family="runtime",
    argv=["sh", "-c", CONTAINER_SCRIPT],
    timeout_s=10,
    summary="is this context a container, and which runtime",
    why="checks must run inside the job's real container: a result from the host says nothing about what the "
    "job sees (topology file, HCAs, variables).",
)
