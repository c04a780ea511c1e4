"""CPU power and topology sources: turbostat, cpuidle and cpufreq sysfs, lscpu."""

from troubleshooter.sources.base import source

# turbostat writes its table and preamble to stderr (outf = stderr unless --out is given); the fixed script
# merges them so the parser sees one stream. --interval/--num_iterations (turbostat >= 4.18) bound the
# sample to about 3 s; without --quiet the configuration preamble (turbo ratios, idle and cpufreq drivers,
# package C-state limit) comes first.
TURBOSTAT_SCRIPT = "exec turbostat --interval 1 --num_iterations 3 2>&1"

source(
    id="turbostat",
    parser="turbostat",
    family="cpu",
    argv=["sh", "-c", TURBOSTAT_SCRIPT],
    timeout_s=20,
    needs="turbostat",
    package="linux-cpupower (Debian) / linux-tools-$(uname -r) (Ubuntu)",
    root=True,
    summary="turbostat: 3 one-second samples of per-CPU clocks, busy time, C-state residency, package power",
    why="Busy cores held below their turbo clock while idle cores sit in C1 instead of C6 cost a few percent "
    "of training throughput (idle cores keep drawing package power). turbostat reads the MSRs that show it.",
)

# The globs must expand on the target; dash has no {a,b} expansion, so every file is spelled out. grep exits
# 1 when nothing matched and 2 when a glob matched no file (no cpuidle on this machine): both still mean
# the output (possibly empty) is what the machine exposes.
CPUIDLE_SCRIPT = (
    "d=/sys/devices/system/cpu; "
    "grep -H . $d/cpu[0-9]*/cpuidle/state[0-9]*/name $d/cpu[0-9]*/cpuidle/state[0-9]*/disable "
    "$d/cpu[0-9]*/cpuidle/state[0-9]*/latency $d/cpu[0-9]*/cpuidle/state[0-9]*/usage "
    "$d/cpu[0-9]*/cpuidle/state[0-9]*/time $d/cpuidle/current_driver 2>/dev/null"
)

source(
    id="cpuidle",
    parser="cpuidle",
    family="cpu",
    argv=["sh", "-c", CPUIDLE_SCRIPT],
    accept_rc=(0, 1, 2),
    timeout_s=10,
    needs="grep",
    summary="cpuidle sysfs: idle states per CPU, which are disabled, usage and residency since boot",
    why="C-states limited to C1 (BIOS, intel_idle.max_cstate=1, a disabled state) keep idle cores drawing "
    "power so busy cores cannot turbo: a few percent of throughput.",
)

CPUFREQ_SCRIPT = (
    "d=/sys/devices/system/cpu; "
    "grep -H . $d/cpu[0-9]*/cpufreq/scaling_driver $d/cpu[0-9]*/cpufreq/scaling_governor "
    "$d/cpu[0-9]*/cpufreq/scaling_max_freq $d/cpu[0-9]*/cpufreq/cpuinfo_max_freq "
    "$d/cpu[0-9]*/cpufreq/scaling_cur_freq $d/cpufreq/boost $d/intel_pstate/no_turbo "
    "$d/smt/active $d/smt/control $d/vulnerabilities/* 2>/dev/null"
)

source(
    id="cpufreq",
    parser="cpufreq",
    family="cpu",
    argv=["sh", "-c", CPUFREQ_SCRIPT],
    accept_rc=(0, 1, 2),
    timeout_s=10,
    needs="grep",
    summary="cpufreq sysfs (driver, governor, max and current clocks, boost), SMT state, CPU vulnerabilities",
    why="A powersave governor, a capped scaling_max_freq or turbo switched off hold busy cores below their "
    "clock; SMT and speculative-execution mitigations change CPU overhead per step.",
)

source(
    id="lscpu",
    parser="lscpu",
    family="cpu",
    argv=["lscpu"],
    timeout_s=10,
    needs="lscpu",
    package="util-linux",
    summary="lscpu: CPU model, sockets, cores, threads, NUMA nodes, hypervisor",
    why="The CPU topology and NUMA layout decide where data-loader and training threads should be pinned; "
    "the hypervisor line tells a VM from bare metal.",
)
