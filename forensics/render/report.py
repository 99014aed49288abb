"""The ready-to-file bug report for aws-neuron/aws-neuron-sdk, shaped like its `bug-report.yml` issue form.

The form's fields, by id (the query parameter names of a prefilled new-issue URL) and label (the
`### Label` headings GitHub writes into an issue opened from the form):
https://github.com/aws-neuron/aws-neuron-sdk/blob/master/.github/ISSUE_TEMPLATE/bug-report.yml

Every field is built from the analysis first, then passed through one `Redactor`, so the Markdown, the
JSON and the URL carry the same placeholders. The repository labels issues by keywords
(`.github/workflows/auto-label-issues.yml`, plain substring matching): the workload field says
"Inference" or "Training" literally and the instance field names the instance type, while the prose
written here avoids the other label words (no "constraint", "observed", "server", ...).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from forensics import __version__
from forensics.records import Analysis, Environment, Finding, MachineProbe, SimilarReport, Workaround
from forensics.redact import Redactor
from forensics.render.groups import label
from forensics.render.markdown import code_block, code_span, fixed_in_text, hypothesis_lines, workaround_lines
from forensics.render.safe import catalogue_prose, markdown_text

REPOSITORY = "aws-neuron/aws-neuron-sdk"
TEMPLATE = "bug-report.yml"
NEW_ISSUE_URL = f"https://github.com/{REPOSITORY}/issues/new"
URL_LIMIT = 8 * 1024  # GitHub answers 414 URI Too Long past about this
FORM_LABELS = ("bug", "needs-triage")

# (id, label) in form order; the current form (2025-09) first, then the two inputs of the older form.
FIELDS = (
    ("description", "Describe the bug"),
    ("modelname", "Model Name"),
    ("workloadtype", "Describe the workload type"),
    ("instancetype", "Instance Type"),
    ("release", "Release version"),
    ("reproduction", "Reproduction Steps"),
    ("regression", "Regression Issue"),
    ("solution", "Possible Solution"),
    ("context", "Logs/Context/Additional Information"),
)
LEGACY_FIELDS = (
    ("neuronx-cc-version", "neuronx-cc version used"),
    ("frameworks-used", "Framework(s) and their versions used ( PyTorch, etc..)"),
)
REGRESSION_OPTION = "Select this option if this issue appears to be a regression."
NO_RESPONSE = "_No response_"  # what GitHub writes for an empty optional field

APT_COMMAND = "apt list --installed | grep -i -e neuron"
PIP_COMMAND = "pip list | grep -i -e neuron -e torch -e transformers -e jax"
FRAMEWORKS = ("torch", "torch-neuronx", "torch-xla", "jax", "jax-neuronx", "transformers", "nki")

REPRO_EMBED_BYTES = 8000
EXCERPT_CONTEXT = 2  # lines shown around each evidence line
EXCERPT_MAX_LINES = 80
TOP_HYPOTHESES = 3

# The form asks "Inference or Training"; these say which one the failing job was.
_INFERENCE_SIGNS = re.compile(
    r"torch_neuronx\.trace|neuronx_distributed_inference|\bNxDI\b|\.generate\(|inference|\bvllm\b", re.I
)
_TRAINING_SIGNS = re.compile(
    r"neuron_parallel_compile|\.backward\(|optimizer_step|optimizer\.step|\btrain(?:ing|er)?\b"
    r"|\btrain\w*\.py\b|--model-type[= ]?cnn-training",
    re.I,
)
_MODEL_HINTS = re.compile(
    r"from_pretrained\(\s*[\"']([\w.-]+/[\w.-]+)[\"']"
    r"|\bmodel[_-]?(?:id|name)\s*[=:]\s*[\"']?([\w.-]+/[\w.-]+)"
    r"|--model[_-](?:id|name)[= ][\"']?([\w.-]+/[\w.-]+)"
)
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*(?:=[^\s\"']+)?)")
_ASSIGNMENT = re.compile(r"\b([A-Z][A-Z0-9_]{2,})=(\"[^\"]*\"|'[^']*'|\S+)")


@dataclass
class LogContext:
    """What the report needs from the log beyond the analysis: the lines around the evidence and
    hints about the job (model, workload), gathered in one streaming pass by `scan_log`."""

    lines: dict[int, str] = field(default_factory=dict)
    model: str | None = None
    inference_signs: list[tuple[int, str]] = field(default_factory=list)
    training_signs: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class ReportInput:
    analysis: Analysis
    log: LogContext = field(default_factory=LogContext)
    instance: str | None = None  # --instance
    repro_name: str | None = None
    repro_text: str | None = None
    journal_table: str | None = None
    probe: MachineProbe | None = None  # --env-here


@dataclass
class IssueForm:
    title: str
    fields: dict[str, str]  # id -> Markdown value, form order, legacy ids last
    redaction: dict[str, int]  # kind -> occurrences masked
    redacted: bool


def _lines_of(finding: Finding) -> list[int]:
    """The input lines a finding points at (its evidence and its hypotheses' evidence)."""
    lines = ({e.line for e in finding.evidence} | {e.line for h in finding.hypotheses for e in h.evidence}
             | {e.line for e in finding.wrapped_by})
    return sorted(line for line in lines if line)  # None: evidence from artifacts, not from a line


def excerpt_window(analysis: Analysis) -> set[int]:
    """Evidence lines with their context, the primary finding's first, capped so the excerpt stays
    the part that matters."""
    primary = primary_finding(analysis)
    findings = sorted(analysis.findings, key=lambda f: f is not primary)
    wanted: set[int] = set()
    for line in (line for finding in findings for line in _lines_of(finding)):
        window = set(range(max(1, line - EXCERPT_CONTEXT), line + EXCERPT_CONTEXT + 1))
        if len(wanted | window) > EXCERPT_MAX_LINES:
            break
        wanted |= window
    return wanted


def scan_log(numbered_lines: Iterable[tuple[int, str]], analysis: Analysis) -> LogContext:
    """One pass over (number, text) lines: keep the excerpt lines, note model and workload hints."""
    window = excerpt_window(analysis)
    context = LogContext()
    for number, text in numbered_lines:
        if number in window:
            context.lines[number] = text
        _note_hints(context, number, text)
    return context


def _note_hints(context: LogContext, number: int, text: str) -> None:
    if context.model is None and (m := _MODEL_HINTS.search(text)):
        context.model = next(g for g in m.groups() if g)
    for signs, pattern in ((context.inference_signs, _INFERENCE_SIGNS), (context.training_signs, _TRAINING_SIGNS)):
        if len(signs) < 3 and (m := pattern.search(text)) and m.group(0) not in {t for _, t in signs}:
            signs.append((number, m.group(0)))


def primary_finding(analysis: Analysis) -> Finding | None:
    """The finding the issue is about: errors before warnings and notes, then catalogue signatures before
    generic ones, then failures before environment findings; ties keep the analysis order (diagnose's rank)."""
    ranked = sorted(
        analysis.findings,
        key=lambda f: (f.severity != "error", f.generic, f.component == "environment"),
    )
    return ranked[0] if ranked else None


# ------------------------------------------------------------------------------------------ fields


def _title(finding: Finding | None) -> str:
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


def _description(report: ReportInput, finding: Finding | None) -> str:
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


def _model_name(report: ReportInput) -> str:
    if report.log.model:
        return f"{code_span(report.log.model)} (named in the log)"
    return "Not named in the log; please fill in the model (e.g. its Hugging Face id)."


def _workload(report: ReportInput) -> str:
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


def _instance_type(report: ReportInput) -> str:
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


def _packages(report: ReportInput) -> tuple[dict[str, str], dict[str, str]]:
    """(apt, pip) packages: the log's listings first, the probe's (--env-here) filling gaps."""
    from forensics.envprobe import PIP_FILTER

    apt: dict[str, str] = {}
    pip: dict[str, str] = {}
    for name, version in report.analysis.environment.packages.items():
        if name.startswith("aws-neuron"):
            apt[name] = version
        elif PIP_FILTER.search(name):  # its "neuron" also covers what the apt filter would
            pip[name] = version
    if report.probe:
        for name, version in report.probe.apt_packages.items():
            apt.setdefault(name, version)
        for name, version in report.probe.pip_packages.items():
            pip.setdefault(name, version)
    return dict(sorted(apt.items())), dict(sorted(pip.items()))


def _sdk_release(pip: dict[str, str]) -> str | None:
    """The Neuron SDK release that ships the compiler the log shows, when the release table knows it."""
    from forensics.diagnose.versions import first_sdk_with, releases, version_key

    compiler = pip.get("neuronx-cc")
    if not compiler:
        return None
    sdk = first_sdk_with("neuronx-cc", compiler)
    shipped = dict(releases()).get(sdk, {}).get("neuronx-cc", ()) if sdk else ()
    wanted = version_key("neuronx-cc", compiler)
    return sdk if any(version_key("neuronx-cc", v) == wanted for v in shipped) else None


def _release(report: ReportInput) -> str:
    apt, pip = _packages(report)
    if not apt and not pip:
        return "The log lists no Neuron package versions; please paste the output of:\n\n" + code_block(
            f"{APT_COMMAND}\n{PIP_COMMAND}", "bash"
        )
    out = []
    sdk = _sdk_release(pip)
    if sdk:
        out += [f"Neuron SDK {sdk} (the release that ships neuronx-cc {pip['neuronx-cc']})", ""]
    apt_lines = [f"{name} {version}" for name, version in apt.items()] or ["(no apt listing in the log)"]
    pip_lines = [f"{name} {version}" for name, version in pip.items()] or ["(no pip listing in the log)"]
    out.append(code_block("\n".join([f"$ {APT_COMMAND}", *apt_lines, f"$ {PIP_COMMAND}", *pip_lines]), "text"))
    return "\n".join(out)


def _reproduction(report: ReportInput) -> str:
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


def _solution(report: ReportInput, finding: Finding | None) -> str:
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


def _context(report: ReportInput, finding: Finding | None) -> str:
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


def _legacy_compiler(report: ReportInput, pip: dict[str, str]) -> str:
    if report.probe and report.probe.compiler_version:
        return report.probe.compiler_version.splitlines()[0]
    return f"NeuronX Compiler version {pip['neuronx-cc']}" if "neuronx-cc" in pip else ""


def redaction_note(form: IssueForm) -> str:
    """The last lines of every report: what was masked, by kind, or that nothing was."""
    if not form.redacted:
        return "**Redaction was turned off (--no-redact).** Check this report for keys, hosts and user names before posting."
    if not form.redaction:
        return "Redaction (offline, by nforensics): nothing to mask was found."
    counts = ", ".join(f"{kind} ×{count}" for kind, count in form.redaction.items())
    return f"Redacted before sharing (offline, by nforensics; the same value keeps the same placeholder): {counts}."


def build_form(report: ReportInput, redactor: Redactor) -> IssueForm:
    """All form fields, redacted with `redactor` (shared with a bundle so placeholders agree)."""
    finding = primary_finding(report.analysis)
    _, pip = _packages(report)
    raw = {
        "description": _description(report, finding),
        "modelname": _model_name(report),
        "workloadtype": _workload(report),
        "instancetype": _instance_type(report),
        "release": _release(report),
        "reproduction": _reproduction(report),
        "regression": f"- [ ] {REGRESSION_OPTION}",
        "solution": _solution(report, finding),
        "context": _context(report, finding),
        "neuronx-cc-version": _legacy_compiler(report, pip),
        "frameworks-used": ", ".join(f"{n} {pip[n]}" for n in FRAMEWORKS if n in pip),
    }
    title = _title(finding)
    counting = redactor.sharing()
    counting.learn(title, *raw.values())
    fields = {key: counting.redact(value) for key, value in raw.items()}
    form = IssueForm(
        title=counting.redact(title), fields=fields, redaction=counting.summary(), redacted=redactor.enabled
    )
    form.fields["context"] = (form.fields["context"] + "\n\n---\n\n" + redaction_note(form)).strip()
    return form


# ------------------------------------------------------------------------------------------ outputs


def render_markdown(form: IssueForm) -> str:
    prefix = "[Bug] " if form.title.startswith("[Bug] ") else ""  # ours; the rest names what the log printed
    out = [f"# {prefix}{markdown_text(form.title[len(prefix):])}", ""]
    for field_id, heading in FIELDS:
        out += [f"<!-- form field id: {field_id} -->", f"### {heading}", "", form.fields.get(field_id) or NO_RESPONSE, ""]
    return "\n".join(out)


def render_json(form: IssueForm, url: str | None = None) -> str:
    payload = {
        "repository": REPOSITORY,
        "template": TEMPLATE,
        "title": form.title,
        "labels": list(FORM_LABELS),
        "fields": form.fields,
        "field_labels": dict(FIELDS + LEGACY_FIELDS),
        "redacted": form.redacted,
        "redaction": form.redaction,
    }
    if url is not None:
        payload["url"] = url
    return json.dumps(payload, indent=2) + "\n"


# The long fields, the first to leave a prefilled URL that is too long (each then says to paste it).
_URL_DROP_ORDER = ("context", "solution", "reproduction", "release", "description")
URL_POINTER = "Too long for a prefilled link: paste this section from the report.md nforensics wrote."


@dataclass
class PrefilledUrl:
    url: str
    full_length: int  # the URL with every field, whether or not it fits
    left_out: list[str]  # field ids that hold URL_POINTER instead of their text


def prefill_url(form: IssueForm) -> PrefilledUrl:
    """The new-issue URL with the form's fields by id. Past URL_LIMIT the long fields are replaced, one
    by one, by a pointer to the Markdown file, so the short ones (instance type, workload) still prefill."""
    params = {"template": TEMPLATE, "title": form.title}
    # Checkbox fields cannot be prefilled; the legacy inputs do not exist in the current form.
    for field_id, _label in FIELDS:
        if field_id != "regression" and form.fields.get(field_id):
            params[field_id] = form.fields[field_id]

    def url() -> str:
        return f"{NEW_ISSUE_URL}?{urlencode(params, quote_via=quote)}"

    full_length, left_out = len(url()), []
    for field_id in _URL_DROP_ORDER:
        if len(url()) <= URL_LIMIT:
            break
        if field_id in params:
            params[field_id] = URL_POINTER
            left_out.append(field_id)
    return PrefilledUrl(url(), full_length, left_out)


# ------------------------------------------------------------------------------------------ env


def render_probe(probe: MachineProbe, format: str, redactor: Redactor) -> str:
    """`nforensics env` output: text (collect_env style) or JSON, redacted."""
    from forensics.envprobe import is_placeholder_wheel

    if format == "json":
        return redactor.redact(probe.model_dump_json(indent=2)) + "\n"
    missing = probe.not_collected

    def value(name: str, text: str | None) -> str:
        return text if text else missing.get(name, "none")

    def listing(name: str, packages: dict[str, str], separator: str = " ") -> str:
        if name in missing:
            return "  " + missing[name]
        rows = [
            f"  {n}{separator}{v}" + ("  (PyPI placeholder, not the real package)" if is_placeholder_wheel(n, v) else "")
            for n, v in packages.items()
        ]
        return "\n".join(rows) or "  none found"

    out = [
        "nforensics env: offline probe of this machine",
        "",
        f"OS: {value('os', probe.os)}",
        f"Python: {value('python', probe.python)}",
        f"Instance type: {value('instance_type', probe.instance_type)}",
        "Neuron software: "
        + ("found" if probe.neuron_software else "none found (no neuronx-cc, neuron-ls, or Neuron apt/pip package)"),
        f"neuronx-cc --version: {value('compiler_version', probe.compiler_version)}",
        f"neuron-ls: {value('neuron_ls', probe.neuron_ls)}",
        f"Neuron apt packages ({APT_COMMAND}):",
        listing("apt_packages", probe.apt_packages),
        f"pip packages ({PIP_COMMAND}; this interpreter):",
        listing("pip_packages", probe.pip_packages),
        "NEURON_*/XLA_* environment variables:",
        listing("env_vars", probe.env_vars, "=") if probe.env_vars else "  none set",
    ]
    return redactor.redact("\n".join(out)) + "\n"
