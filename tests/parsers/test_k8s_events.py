"""Kubernetes events (kubectl describe's Events table, kubectl get events) from real documentation examples."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_the_device_plugin_refusing_two_shared_gpus():
    f = parsers.run("k8s-events", load("k8s-events/k8sdp-readme-timeslicing-request-2-too-large.txt"))
    assert f["k8s.event_reasons"] == ["UnexpectedAdmissionError"]
    assert f["k8s.shared_gpu_request_too_large"] is True
    assert f["k8s.events"][0].startswith("UnexpectedAdmissionError: Allocate failed due to rpc error")


def test_a_sandbox_failure_with_a_repeat_count_in_the_age_column():
    f = parsers.run("k8s-events", load("k8s-events/coco-kata-cold-plug-podresources-get-disabled.txt"))
    assert f["k8s.event_reasons"] == ["FailedCreatePodSandBox"]
    # cut to 300 characters in the middle: the head says what failed, the tail the innermost error of the chain
    assert f["k8s.events"][0].endswith("rpc error: code = Unknown desc = PodResources API Get method disabled")
    assert len(f["k8s.events"][0]) == 300
    assert f["k8s.events"][0].startswith("FailedCreatePodSandBox: (combined from similar events): Failed to create pod sandbox")
    assert "k8s.shared_gpu_request_too_large" not in f


def test_no_event_row():
    with pytest.raises(ParseError):
        parsers.run("k8s-events", "Events:  <none>\n")


def test_the_resource_a_pod_found_insufficient_without_the_sentences_full_stop():
    f = parsers.run("k8s-events", load("k8s-events/sirzzang-eks-insufficient-nvidia-gpu-full-stop.txt"))
    assert f["k8s.insufficient"] == ["nvidia.com/gpu"]


def test_a_row_pasted_without_its_age_column_keeps_the_message_whole():
    # Type, Reason, From, Message two blanks apart: the source is not an age, and "no" stays the message's first word
    f = parsers.run("k8s-events", load("k8s-events/kai706-row-without-age-column-gpu-memory.txt"))
    assert f["k8s.events"] == ["Unschedulable: no nodes with enough resources were found: 1 node(s) didn't have enough "
                               "resources: GPU memory."]
