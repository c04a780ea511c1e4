#!/usr/bin/env bash
# Start munge and a single-node Slurm on this machine, for the integration tests and for developers.
#
# Idempotent: if `sinfo` already answers, it does nothing. Needs root (daemons run as root, mknod).
# Everything Slurm writes (state, spool, pid files, logs, fake GPU devices) lives under $TS_SLURM_DIR
# (default /tmp/ts-slurm); the config is written to /etc/slurm/slurm.conf and /etc/slurm/gres.conf, but an
# existing config that this script did not write is never overwritten.
#
# The node line comes from `slurmd -C` with RealMemory lowered to 90% (else the node goes INVAL) and two
# fake GPUs (character devices made with mknod; Slurm rejects plain files) so that --gres=gpu:N works.
set -euo pipefail

DIR=${TS_SLURM_DIR:-/tmp/ts-slurm}
CONF_DIR=/etc/slurm
MARK="# written by troubleshooter .ci/start-slurm.sh"
TIMEOUT=${TS_SLURM_TIMEOUT:-30}

say() { echo "start-slurm: $*"; }
die() { echo "start-slurm: ERROR: $*" >&2; exit 1; }

show_logs() {
  for f in "$DIR"/log/slurmctld.log "$DIR"/log/slurmd.log /var/log/munge/munged.log; do
    [ -f "$f" ] || continue
    echo "----- tail of $f" >&2
    tail -n 40 "$f" >&2 || true
  done
  sinfo -N -l >&2 2>&1 || true
  scontrol show node >&2 2>&1 || true
}

# A node left drained (e.g. by an earlier start that raced another) is resumed; then wait for it to be idle.
wait_idle() {
  local deadline=$((SECONDS + TIMEOUT)) state="" resumed=0 n
  while [ $SECONDS -lt $deadline ]; do
    state=$(sinfo -h -N -o '%t' 2>/dev/null | head -n 1 || true)
    case "$state" in
      idle|mix|alloc) return 0 ;;
      drain*|drng*|down*|inval*)
        if [ $resumed = 0 ]; then
          n=$(sinfo -h -N -o '%N' | head -n 1)
          say "node $n is $state ($(sinfo -h -N -o '%E' | head -n 1)): resuming it"
          scontrol update NodeName="$n" State=RESUME >/dev/null 2>&1 || true
          resumed=1
        fi ;;
    esac
    sleep 0.2
  done
  show_logs
  die "node not idle after ${TIMEOUT}s (state: ${state:-no answer})"
}

# One start at a time (parallel test workers may all call this script): wait for the lock, then re-check.
mkdir -p "$DIR"
exec 9>"$DIR.lock"
flock -w 120 9 || die "could not lock $DIR.lock"

if sinfo -h >/dev/null 2>&1; then
  say "Slurm already answers (sinfo ok): not starting it"
  wait_idle
  sinfo
  exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root (starts munged, slurmctld and slurmd, makes device nodes)"
for b in munged slurmctld slurmd sinfo; do
  command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || die "$b not found: apt-get install slurmctld slurmd slurm-client munge"
done

# ---- munge
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  say "munged already running"
else
  [ -f /etc/munge/munge.key ] || die "/etc/munge/munge.key missing (the munge package creates it)"
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge 2>/dev/null || true
  say "starting munged"
  runuser -u munge -- /usr/sbin/munged --force 9>&-  # the daemons must not inherit the start lock
  for _ in $(seq 1 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.1
  done
  munge -n | unmunge >/dev/null || die "munged does not answer"
fi

# ---- stop leftovers of an earlier start (by their pid files only)
for d in slurmctld slurmd; do
  pf="$DIR/run/$d.pid"
  if [ -f "$pf" ]; then
    pid=$(cat "$pf" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      say "stopping stale $d (pid $pid)"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pf"
  fi
done

# ---- config
mkdir -p "$DIR"/state "$DIR"/spool "$DIR"/run "$DIR"/log "$DIR"/dev "$CONF_DIR"
if [ -f "$CONF_DIR/slurm.conf" ] && ! grep -qF "$MARK" "$CONF_DIR/slurm.conf"; then
  die "$CONF_DIR/slurm.conf exists and was not written by this script; not touching it (Slurm does not answer sinfo)"
fi

host=$(hostname -s)
node=$(slurmd -C | head -n 1)
mem=$(printf '%s\n' "$node" | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
[ -n "$mem" ] || die "cannot read RealMemory from: $node"
mem90=$((mem * 9 / 10))
node=$(printf '%s\n' "$node" | sed "s/RealMemory=[0-9]*/RealMemory=$mem90/")
node="$node NodeAddr=127.0.0.1 Gres=gpu:2 State=UNKNOWN"

for i in 0 1; do
  [ -c "$DIR/dev/nvidia$i" ] || { rm -f "$DIR/dev/nvidia$i"; mknod "$DIR/dev/nvidia$i" c 1 3; }
done

cat > "$CONF_DIR/slurm.conf" <<CONF
$MARK
ClusterName=ts
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
GresTypes=gpu
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
KillWait=5
$node
PartitionName=debug Nodes=ALL Default=YES State=UP MaxTime=INFINITE
CONF

cat > "$CONF_DIR/gres.conf" <<CONF
$MARK
AutoDetect=off
NodeName=$(printf '%s\n' "$node" | sed -n 's/^NodeName=\([^ ]*\).*/\1/p') Name=gpu File=$DIR/dev/nvidia[0-1]
CONF

say "wrote $CONF_DIR/slurm.conf and gres.conf (node: $node)"

# ---- daemons (no systemd: they daemonize themselves and write their pid files)
say "starting slurmctld"
slurmctld -c 9>&- || { show_logs; die "slurmctld did not start"; }
say "starting slurmd"
slurmd 9>&- || { show_logs; die "slurmd did not start"; }

# ---- wait for the node to be idle
wait_idle
say "Slurm is up: node $host idle"
sinfo
