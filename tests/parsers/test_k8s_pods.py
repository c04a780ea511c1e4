"""k8s-pods: kubectl get pods listings, from real pastes with exact values."""

import pytest

from tests.corpus import load
from troubleshooter import parsers


@pytest.mark.parametrize("rel, facts", [
    ("k8s-pods/gpuopdocs-operator-crashloop-memory-limit.txt",
     {"k8s.pods_listed": 1, "k8s.pods_not_running": ["gpu-operator-568c7ff7f6-chg5b: CrashLoopBackOff (restarts 4)"],
      "k8s.gpu_stack_pods_not_running": ["gpu-operator-568c7ff7f6-chg5b: CrashLoopBackOff (restarts 4)"]}),
    ("k8s-pods/ackdocs-app-crashloop-beside-running.txt",
     {"k8s.pods_listed": 3, "k8s.pods_not_running": ["app-6g-v1-0: CrashLoopBackOff (restarts 5)"],
      "k8s.gpu_stack_pods_not_running": []}),
    ("k8s-pods/k8sdp13-device-plugin-daemonset-crashloop.txt",
     {"k8s.pods_listed": 1,
      "k8s.pods_not_running": ["nvidia-device-plugin-daemonset-csjxw: CrashLoopBackOff (restarts 12)"],
      "k8s.gpu_stack_pods_not_running": ["nvidia-device-plugin-daemonset-csjxw: CrashLoopBackOff (restarts 12)"]}),
])
def test_pods_not_running_and_the_gpu_stacks_among_them(rel, facts):
    text = load(rel)
    assert parsers.detect(text) == "k8s-pods"
    assert parsers.run("k8s-pods", text) == facts


@pytest.mark.parametrize("text", ["", "NAME READY STATUS RESTARTS AGE\n", "NAME   STATUS   ROLES   AGE   VERSION\nn1   Ready   <none>   3d   v1.29\n"])
def test_other_text_is_refused(text):
    with pytest.raises(parsers.ParseError):
        parsers.run("k8s-pods", text)


def test_a_listing_names_no_cause() -> None:
    from tests.test_causes_scope import _found

    for rel in ("k8s-pods/gpuopdocs-operator-crashloop-memory-limit.txt", "k8s-pods/ackdocs-app-crashloop-beside-running.txt",
                "k8s-pods/k8sdp13-device-plugin-daemonset-crashloop.txt"):
        assert _found([rel]) == [], rel
