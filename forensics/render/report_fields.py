"""The prose of the issue form's fields, one builder per field id (forensics/render/report.py puts them
together and redacts them): what failed and where, the workload, the reproducer, the likely causes and
workarounds, and the log excerpt with the environment and the related public reports."""

from __future__ import annotations

import re

from forensics import __version__
from forensics.records import Analysis, Environment, Finding, SimilarReport, Workaround
from forensics.render.groups import label
from forensics.render.markdown import code_block, code_span, fixed_in_text, hypothesis_lines, workaround_lines
from forensics.render.safe import catalogue_prose, markdown_text
from forensics.render.report_input import ReportInput, primary_finding

REPRO_EMBED_BYTES = 8000
TOP_HYPOTHESES = 3

_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*(?:=[^\s\"']+)?)")
_ASSIGNMENT = re.compile(r"\b([A-Z][A-Z0-9_]{2,})=(\"[^\"]*\"|'[^']*'|\S+)")


def title_field(finding: Finding | None) -> str:
    if finding is None:
        return "[Bug] Neuron failure (nforensics recognised no known signature)"
    return f"[Bug] {label(finding)}"


def _first_line(finding: Finding) -> int | None:
    return next((e.line for e in finding.evidence if e.line), None)


_COMPILER_PASS = re.compile(r"\[((?:sg\d+/)?[A-Z]\w*(?:/\w+)+)\]")  # `[sg0000/Tensorizer/BirCodeGenLoop]`
_RUNTIME_FUNCTION = re.compile(r"\b((?:NRT|TDRV|NMGR|KMGR|ENC|NCCL|CCOM):\w+)")  # `NRT:nrt_load`


def _stage(finding: Finding) -> str:
    """The component, and the compiler pass or runtime API when the finding or its first line names it."""
    named = [f"{k.replace('_name', '')} {code_span(str(v))}" for k, v in finding.fields.items()
             if k in ("pass_name", "pass", "stage", "phase", "api")]  # fmt: skip
    first = finding.evidence[0].text if finding.evidence else ""
    if not named and (m := _COMPILER_PASS.search(first)):
        named = [f"pass {code_span(m.group(1))}"]
    elif not named and (m := _RUNTIME_FUNCTION.search(first)):
        named = [f"in {code_span(m.group(1))}"]
    return finding.component + (f" ({', '.join(named)})" if named else "")


def description_field(report: ReportInput, finding: Finding | None) -> str:
    analysis = report.analysis
    if finding is None:
        out = [
            f"nforensics found no known Neuron failure signature in {code_span(analysis.source)}"
            f" ({analysis.total_lines} lines). The log excerpt is under Logs/Context."
        ]
        return "\n".join(out)
    out = [markdown_text(finding.summary, line_start=True), ""]
    where = f", line {_first_line(finding)}" if _first_line(finding) else ""
    code = f"{code_span(finding.code)}, " if finding.code else ""
    out.append(f"**Error** ({code}{finding.component}{where}):")
    out.append("")
    message = "\n".join(e.text for e in finding.evidence[:12]) or finding.summary
    out += [code_block(message, "text"), ""]
    out.append(f"**Failing stage:** {_stage(finding)}")
    target = analysis.environment.target
    if target:
        out.append(f"**Target:** {code_span(target)}")
    if finding.meaning:
        out += ["", f"**What it means:** {catalogue_prose(finding.meaning)}"]
    others = [f for f in analysis.findings if f.signature != finding.signature]
    if others or finding.wrapped_by:
        out += ["", "**Other failures in the same log:**", ""]
        for other in others:
            line = f" (line {_first_line(other)})" if _first_line(other) else ""
            code = f"{code_span(other.code)} " if other.code else ""
            out.append(f"- {code}{markdown_text(other.title)}{line}")
        for envelope in finding.wrapped_by:  # a wrapper reporting this same failure again
            line = f" (line {envelope.line})" if envelope.line else ""
            out.append(f"- {markdown_text(envelope.text)}{line}: reports the failure above again")
    return "\n".join(out)


def model_field(report: ReportInput) -> str:
    if report.log.model:
        return f"{code_span(report.log.model)} (named in the log)"
    return "Not named in the log; please fill in the model (e.g. its Hugging Face id)."


def workload_field(report: ReportInput) -> str:
    inference, training = report.log.inference_signs, report.log.training_signs
    flags = report.analysis.environment.compiler_flags
    details = f"\n\nCompiler flags: {code_span(' '.join(flags))}" if flags else ""
    if not inference and not training:
        return "Not determined from the log; please state the workload type." + details

    def signs(found: list[tuple[int, str]]) -> str:
        return ", ".join(f"{code_span(text)} (line {line})" for line, text in found)

    if len(training) > len(inference):
        return f"Training (the log shows {signs(training)})" + details
    return f"Inference (the log shows {signs(inference)})" + details


def instance_field(report: ReportInput) -> str:
    env = report.analysis.environment
    if report.instance:
        return markdown_text(report.instance)
    if env.instance_type:
        return f"{markdown_text(env.instance_type)} (from the log)"
    if report.probe and report.probe.instance_type:
        return f"{report.probe.instance_type} (probed on the failing machine)"
    if env.target:
        return f"Not stated in the log; compile target {code_span(env.target)}. Please add the EC2 instance type."
    return "Not stated in the log; please add the EC2 instance type."  # no example: it would set a label


def reproduction_field(report: ReportInput) -> str:
    out: list[str] = []
    if report.repro_text is not None and len(report.repro_text.encode()) <= REPRO_EMBED_BYTES:
        name = report.repro_name or ""
        language = "python" if name.endswith(".py") else "bash" if name.endswith(".sh") else ""
        out += [f"Reproducer ({code_span(report.repro_name or 'repro')}):", "", code_block(report.repro_text, language)]
    elif report.repro_text is not None:
        size = len(report.repro_text.encode())
        lines = report.repro_text.count("\n") + 1
        out.append(
            f"Reproducer {code_span(report.repro_name or 'repro')} ({lines} lines, {size / 1024:.1f} KB) is too long"
            " to embed: it is attached to this issue as a file."
        )
    else:
        out.append("No reproducer attached yet (nforensics report --repro FILE embeds one).")
    flags = report.analysis.environment.compiler_flags
    if flags:
        out += ["", "Compiler flags in the failing run:", "", code_block(" ".join(flags), "bash")]
    if report.journal_table:
        out += ["", "Re-runs recorded by nforensics (experiment journal):", "", report.journal_table.strip()]
    return "\n".join(out)


def _workaround_tokens(workaround: Workaround) -> tuple[list[str], list[tuple[str, str]]]:
    code = workaround.code or ""
    flags = [f for f in _FLAG.findall(code) if not f.startswith("--target")]
    # `export NEURON_CC_FLAGS="$NEURON_CC_FLAGS --lnc=1"`: the flag is what counts, not the old value.
    assignments = [
        (name, " ".join(t for t in value.strip("'\"").split() if not t.startswith("$")))
        for name, value in _ASSIGNMENT.findall(code)
    ]
    return flags, assignments


def already_applied(workaround: Workaround, environment: Environment) -> bool:
    """True when the workaround is a shell setting (flags, variables) the failing run already had.

    Code in other languages (Python edits, model changes) cannot be checked against a log: never "tried".
    """
    if (workaround.language or "shell") not in ("shell", "bash", "sh", "console"):
        return False
    flags, assignments = _workaround_tokens(workaround)
    if not flags and not assignments:
        return False
    in_use = set(environment.compiler_flags)
    for value in environment.env_vars.values():
        in_use |= set(value.split())
    flags_here = all(f in in_use for f in flags)
    vars_here = all(
        environment.env_vars.get(name) == value or set(value.split()) <= in_use for name, value in assignments
    )
    return flags_here and vars_here


def solution_field(report: ReportInput, finding: Finding | None) -> str:
    if finding is None:
        return ""
    out: list[str] = []
    if finding.hypotheses:
        out += ["Likely causes ranked by nforensics (score, then the evidence in the log):", ""]
        out += hypothesis_lines(finding.hypotheses[:TOP_HYPOTHESES])
    if finding.fixed_in:
        out += ["", f"**Fixed in:** {fixed_in_text(finding.fixed_in)}"]
    environment = report.analysis.environment
    tried = [w for w in finding.workarounds if already_applied(w, environment)]
    untried = [w for w in finding.workarounds if w not in tried]
    if untried:
        out += ["", "**Workarounds to try:**", "", *workaround_lines(untried)]
    if tried:
        out += ["", "**Already tried** (the failing run already had these set, and it still failed):", ""]
        out += [f"- {w.title}: {code_span(' '.join((w.code or '').split()))}" for w in tried]
    return "\n".join(out).strip()


def _excerpt(report: ReportInput) -> str:
    analysis = report.analysis
    lines = report.log.lines
    if not lines:  # no log text at hand (e.g. a JSON analysis): the evidence lines themselves
        lines = {e.line: e.text for f in analysis.findings for e in f.evidence if e.line}
    if not lines:
        return ""
    width = len(str(max(lines)))
    shown, previous = [], None
    for number in sorted(lines):
        if previous is not None and number > previous + 1:
            shown.append(f"{'.' * width} |")
        shown.append(f"{number:>{width}} | {lines[number]}")
        previous = number
    return "\n".join(shown)


def context_field(report: ReportInput, finding: Finding | None) -> str:
    analysis = report.analysis
    out: list[str] = []
    excerpt = _excerpt(report)
    if excerpt:
        out += [
            f"Log excerpt from {code_span(analysis.source)} (the lines that matter, with their line numbers;"
            f" {analysis.total_lines} lines in all):",
            "",
            code_block(excerpt, "text"),
        ]
    env_vars = dict(analysis.environment.env_vars)
    if report.probe:
        for name, value in report.probe.env_vars.items():
            env_vars.setdefault(name, value)
    if env_vars:
        out += ["", "Environment variables:", "", code_block("\n".join(f"{k}={v}" for k, v in env_vars.items()), "bash")]
    if report.probe:
        out += ["", "Machine (probed by `nforensics report --env-here` on the failing machine):", ""]
        out += [f"- OS: {markdown_text(report.probe.os or 'could not collect')}",
                f"- Python: {markdown_text(report.probe.python or 'could not collect')}"]
        if report.probe.neuron_ls:
            out += ["", code_block(report.probe.neuron_ls, "text")]
    if finding is not None:
        out += [
            "",
            f"nforensics signature {code_span(finding.signature)}, fingerprint {code_span(finding.fingerprint)}"
            f" (v{finding.fingerprint_version}).",
        ]
        if finding.references:
            out += ["", "References:", ""] + [f"- [{r.title}]({r.url})" for r in finding.references]
        if finding.similar_reports:
            out += ["", "Related issues (public reports whose error resembles this one, found by nforensics):", ""]
            out += [f"- {r.url} ({_state(r)}): {markdown_text(r.title)}" for r in finding.similar_reports]
    out += ["", f"Report written by nforensics {__version__} from {code_span(analysis.source)}."]
    return "\n".join(out).strip()


def _state(report: SimilarReport) -> str:
    return (report.state or "state unknown") + (f", fixed in {report.fixed_in}" if report.fixed_in else "")


DUPLICATE_CLOSENESS = 0.8  # a related report this close (or of the same signature) may be the same issue


def likely_duplicates(analysis: Analysis) -> list[str]:
    """What to tell the user before filing: the public reports that may already be this issue."""
    finding = primary_finding(analysis)
    if finding is None:
        return []
    notes = []
    for r in finding.similar_reports:
        if r.closeness >= DUPLICATE_CLOSENESS or (r.signature and r.signature == finding.signature):
            advice = f": {r.answer}" if r.answer else ""
            notes.append(f"this looks like {r.repo}#{r.number} ({_state(r)}){advice} {r.url}")
    return notes
