"""Logs the user points at: the training log (step times). Read on the target, so a path inside the
job's container works with --exec/--job. Skipped with the reason when no path is given."""

from troubleshooter.sources.base import source

source(
    id="step-times-log",
    parser="step-times",
    family="logs",
    argv=["tail", "-c", "16777216", "{steps_log}"],
    timeout_s=15,
    summary="step times from the training log (--steps-log)",
    why="Step-time shape tells stalls from slowness: steady, two modes (a repeatable stall) or a long tail. "
    "Case 2's 50-100 ms data-loader stalls showed as a bimodal step time.",
)
