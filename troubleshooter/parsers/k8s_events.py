"""Kubernetes events: the ``Events:`` table of ``kubectl describe pod|node`` and ``kubectl get events``, where the
kubelet, the scheduler and the device plugins say why a GPU pod did not start.

Real samples (NVIDIA/k8s-device-plugin's README on time-slicing; the Confidential Containers troubleshooting page;
tests/data/k8s-events)::

    Events:
      Type     Reason                    Age   From               Message
      ----     ------                    ----  ----               -------
      Warning  UnexpectedAdmissionError  13s   kubelet            Allocate failed due to rpc error: code = Unknown desc = request for 'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1
       Warning  FailedCreatePodSandBox  19s (x16 over 34s)  kubelet  (combined from similar events): Failed to create pod sandbox: ...

What it means here: the reason names the stage (FailedScheduling: no node offers what the pod asks; UnexpectedAdmission
Error: the device plugin refused the allocation; FailedCreatePodSandBox / Failed: the runtime or its hooks; Failed
PrepareDynamicResources: a DRA driver), and the message carries the component's own words, which other kinds read too
(the NVIDIA container hook's errors inside a sandbox failure). Only Warning events are kept.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("k8s.events", "list", "", "the Warning events, 'Reason: message' as printed (message cut at 300), at most 20"),
    ("k8s.event_reasons", "list", "", "the distinct reasons of the Warning events (FailedScheduling, "
     "UnexpectedAdmissionError, FailedCreatePodSandBox ...), in order"),
    ("k8s.insufficient", "list", "", "the resources the scheduler found no node with enough of ('Insufficient "
     "nvidia.com/gpu'), in order"),
    ("k8s.shared_gpu_request_too_large", "bool", "", "the device plugin refused a container asking for more than one "
     "shared GPU ('request for 'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1'): with "
     "time-slicing or MPS a container may ask for one replica only"),
]

MAX_LINE = 8192
# kubectl describe: Type Reason Age From Message (Age may read "19s (x16 over 34s)"; From "kubelet, node1")
_DESCRIBE = re.compile(r"^\s*(Warning|Normal)\s+([A-Z][A-Za-z]{2,60})\s+(?:<[a-z]+>|\S+(?:\s+\(x\d+ over \S+\))?)\s+"
                       r"(\S+(?:, \S+)?)\s+(\S.*)$")
# kubectl get events: LAST SEEN TYPE REASON OBJECT MESSAGE
_GET = re.compile(r"^[^\S\n]*\S+\s+(Warning|Normal)\s+([A-Z][A-Za-z]{2,60})\s+(\S+/\S+)\s+(\S.*)$")
_HEADER = re.compile(r"^[^\S\n]*(?:Type\s+Reason\s+Age\s+From\s+Message|LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE)\s*$",
                     re.MULTILINE)
# kubectl's columns are two or more blanks apart: a row pasted without its Age column has four of them, and the
# single-blank reading would take the source for the age and the message's first word for the source
_AGE = re.compile(r"^(?:<[a-z]+>|\d+(?:\.\d+)?[smhdy](?:\d+[smhd])*(?:\s+\(x\d+ over \S+\))?)$")
_INSUFFICIENT = re.compile(r"Insufficient ([\w./-]*[\w])")  # not the sentence's full stop: "Insufficient nvidia.com/gpu."
_SHARED = re.compile(r"maximum request size for shared resources is 1")


def _detect(text: str) -> float:
    head = text[:131072]
    if _HEADER.search(head):
        return 0.9
    rows = sum(1 for ln in head.split("\n", 2000)[:2000] if _DESCRIBE.match(ln) or _GET.match(ln))
    return 0.7 if rows else 0.0


@parser(
    "k8s-events",
    detect=_detect,
    summary="Kubernetes events (kubectl describe's Events table, kubectl get events): why a GPU pod did not start",
    facts=FACTS,
    command="kubectl describe pod <pod> | sed -n '/^Events:/,$p'; kubectl get events --field-selector type=Warning",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "Kubernetes events (kubectl describe's Events table or kubectl get events)")
    events: list[str] = []
    reasons: list[str] = []
    insufficient: list[str] = []
    rows = 0
    shared = False
    for raw in text.split("\n"):
        ln = raw[:MAX_LINE].rstrip()
        m = _DESCRIBE.match(ln) or _GET.match(ln)
        if not m:
            continue
        rows += 1
        kind, reason, message = m.group(1), m.group(2), m.group(4).strip()
        cols = re.split(r"\s{2,}", ln.strip())
        if m.re is _DESCRIBE and len(cols) == 4 and cols[0] == kind and not _AGE.match(cols[2]):
            message = cols[3]  # Type, Reason, From, Message: no Age column
        if kind != "Warning":
            continue
        add_clipped(events, f"{reason}: {message}", 20, 300, keep_end=True)  # a chain's innermost error is its end
        if reason not in reasons and len(reasons) < 32:
            reasons.append(reason)
        shared = shared or bool(_SHARED.search(message))
        for r in _INSUFFICIENT.findall(message):
            if r not in insufficient and len(insufficient) < 16:
                insufficient.append(r)
    if not rows:
        raise ParseError("no Kubernetes event row ('Warning  Reason  Age  From  Message', or kubectl get events' "
                         "'LAST SEEN  TYPE  REASON  OBJECT  MESSAGE')")
    facts: dict[str, Any] = {"k8s.events": events, "k8s.event_reasons": reasons}
    if insufficient:
        facts["k8s.insufficient"] = insufficient
    if shared:
        facts["k8s.shared_gpu_request_too_large"] = True
    return facts
