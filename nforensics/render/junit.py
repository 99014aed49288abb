"""JUnit XML: one failing test case per failure group, for CI test-report widgets (Jenkins, GitLab, ...).

There is no official schema; the shape follows Ant's XMLJUnitResultFormatter and Jenkins' junit-4.xsd
(../shared/reference/ci-and-reports.md section 8): classname = component, name = title,
failure type = code.
"""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from nforensics.records import Analysis
from nforensics.render.groups import FailureGroup, group_findings

SUITE = "nforensics"
# Characters XML 1.0 forbids even escaped; logs carry them (ANSI colour codes, NULs from binary junk).
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _testcase(group: FailureGroup) -> ET.Element:
    finding, first = group.finding, group.first
    case = ET.Element("testcase", classname=finding.component, name=_xml_text(finding.title), time="0")
    if first.path:
        case.set("file", _xml_text(first.path))
    body = [finding.summary, "", f"seen {group.count}x in: {', '.join(group.inputs)}"]
    body += [f"line {e.line}: {e.text}" for e in finding.evidence]
    if finding.hypotheses:
        body.append(f"most likely: {finding.hypotheses[0].title}")
    body += [f"workaround: {w.title}" for w in finding.workarounds]
    if not group.failed:  # a warning or a note: a passing case that says what it saw
        ET.SubElement(case, "system-out").text = _xml_text("\n".join(body))
        return case
    failure = ET.SubElement(case, "failure", message=_xml_text(finding.summary), type=finding.code or finding.signature)
    failure.text = _xml_text("\n".join(body))
    return case


def render_junit(analyses: list[Analysis]) -> str:
    groups = group_findings(analyses)
    cases = [_testcase(group) for group in groups]
    if not cases:  # CI report widgets treat a suite with no test cases as a broken report
        cases = [ET.Element("testcase", classname=SUITE, name="no Neuron failure recognised", time="0")]
    failed = sum(group.failed for group in groups)
    counts = {"tests": str(len(cases)), "failures": str(failed), "errors": "0", "skipped": "0", "time": "0"}
    root = ET.Element("testsuites", {"name": SUITE, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE, **counts})
    suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
