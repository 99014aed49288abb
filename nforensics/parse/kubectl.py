"""kubectl's status output for the Neuron components (device plugin, scheduler extension, problem detector): a
`kubectl get daemonset|pods` row or a `kubectl describe daemonset` block that says one is not running where it
should. Such output holds no failure word (`neuron-device-plugin-daemonset   2   2   0   2   0`), so it is read
by its shape: which column is which, and what a healthy component would show.
"""

from __future__ import annotations

from collections.abc import Iterable

from nforensics.linear_regex import compile_linear

# `kubectl get daemonset`: NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE ... (a pasted table may arrive as one
# line, its rows run together: each row is found by the component's name).
_DAEMONSET_ROW = compile_linear(r"\b(neuron[\w.-]*)\s+(\d{1,6})\s+(\d{1,6})\s+(\d{1,6})\s+(\d{1,6})\s+(\d{1,6})(?:\s|$)")
# `kubectl get pods`: NAME READY STATUS RESTARTS AGE.
_POD_ROW = compile_linear(r"\b(neuron[\w.-]*)\s+(\d{1,4})/(\d{1,4})\s+([A-Za-z][\w:-]{0,40})")
_HEALTHY_POD = frozenset({"Running", "Completed"})
# `kubectl describe daemonset NAME`: its name, then how many nodes it is scheduled on.
_DESCRIBED = compile_linear(r"^\s*Name:\s+neuron[\w.-]*\s*$")
_SCHEDULED_NOWHERE = compile_linear(r"^\s*Desired Number of Nodes Scheduled:\s*0\s*$")
DESCRIBE_SPAN = 30  # lines from a described daemonset's name to its counts
KUBECTL_PATTERNS = (_DAEMONSET_ROW, _POD_ROW, _DESCRIBED, _SCHEDULED_NOWHERE)  # what the gates let by (gates.py)


def not_ready(lines: Iterable[tuple[int, str]]) -> int | None:
    """The first line that shows a Neuron component scheduled on no node, or fewer of its pods ready than wanted."""
    described = None
    for number, text in lines:
        for row in _DAEMONSET_ROW.finditer(text):
            desired, ready, available = int(row.group(2)), int(row.group(4)), int(row.group(6))
            if desired == 0 or ready < desired or available < desired:
                return number
        for pod in _POD_ROW.finditer(text):
            if int(pod.group(2)) < int(pod.group(3)) or pod.group(4) not in _HEALTHY_POD:
                return number
        if _DESCRIBED.search(text):
            described = number
        elif described is not None and number - described <= DESCRIBE_SPAN and _SCHEDULED_NOWHERE.search(text):
            return number
    return None
