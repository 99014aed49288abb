"""`nforensics report`: assemble the bug report, its prefilled URL and the `--bundle` folder + archive.

Order matters for privacy: every text passes one `Redactor` before it is written anywhere, the report
first (so report.md reads the same with or without a bundle), then the log, env.json and the attachments,
all with the same placeholders. The bundle is a folder the user can audit plus a `.tar.gz` of it beside
it, as the Neuron GatherInfo tool did; MANIFEST.md says what each file reveals (the HLO reveals the model
structure, a reproducer reveals source code, weights are never included).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nforensics.ci import write_file
from nforensics.errors import InputError
from nforensics.ingest import is_binary
from nforensics.records import Analysis, MachineProbe
from nforensics.redact import Redactor
from nforensics.render.markdown import cell, code_span
from nforensics.render.report import IssueForm, issue_form, redaction_note
from nforensics.render.report_fields import duplicate_notes
from nforensics.render.report_outputs import URL_LIMIT, PrefilledUrl, prefill_url, render_json, render_markdown
from nforensics.report.build import REPRO_EMBED_BYTES, build_report
from nforensics.report.inputs import ReportInput, scan_log

MAX_ATTACHMENT_BYTES = 256 << 20  # an HLO dump can be large; past this the user shares it separately


@dataclass
class ReportOptions:
    log: str
    instance: str | None = None
    repro: str | None = None
    url: bool = False
    bundle: str | None = None
    hlo: str | None = None
    redact: bool = True
    env_here: bool = False
    python: str | None = None  # --python: the interpreter whose packages --env-here lists
    journal: str | None = None
    format: str = "markdown"


@dataclass
class Report:
    form: IssueForm
    text: str  # the report in the requested format
    markdown: str
    url: PrefilledUrl | None = None
    bundle_dir: Path | None = None
    archive: Path | None = None
    duplicates: list[str] = field(default_factory=list)  # public reports that may already be this issue


def _read_text(path: str) -> str:
    from nforensics.ingest import read_lines  # same refusals as for logs: missing, folder, binary

    _name, lines = read_lines(path)
    return "".join(f"{text}\n" for _number, text in lines)


def _journal_table(path: str) -> str:
    from nforensics.experiments.journal import sessions_of  # raises InputError for a missing journal
    from nforensics.render.experiments import journal_markdown

    return journal_markdown(sessions_of(path))


class _Log:
    """The failing log, read twice (once for the analysis, once for the excerpt and the bundle copy).
    Standard input can be read only once, so its lines are kept in memory."""

    def __init__(self, spec: str) -> None:
        from nforensics.ingest import read_lines  # gzip, binary refusal and decoding as for every input

        self.spec = spec
        self._stdin_lines = list(read_lines(spec)[1]) if spec == "-" else None

    def analyze(self) -> Analysis:
        from nforensics.pipeline import analyze_lines, analyze_path

        if self._stdin_lines is not None:
            return analyze_lines("<stdin>", self._stdin_lines)
        return analyze_path(self.spec)

    def lines(self) -> Iterable[tuple[int, str]]:
        from nforensics.ingest import read_lines

        if self._stdin_lines is not None:
            return self._stdin_lines
        return read_lines(self.spec)[1]

    @property
    def name(self) -> str:
        return "stdin.log" if self._stdin_lines is not None else Path(self.spec).name


def make_report(options: ReportOptions) -> Report:
    if options.hlo and not options.bundle:
        raise InputError("--hlo goes into a bundle: add --bundle DIR")
    if options.format not in ("markdown", "json"):
        raise InputError(f"unknown report format {options.format!r}: use markdown or json")
    # Every input is checked before the analysis, which can take a while on a large log.
    repro_text = _read_text(options.repro) if options.repro else None
    journal_table = _journal_table(options.journal) if options.journal else None
    if options.bundle:
        _check_bundle_inputs(Path(options.bundle), options.hlo)
    log = _Log(options.log)
    analysis = log.analyze()
    redactor = Redactor(enabled=options.redact)

    def learned(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        # The whole log passes the redactor before any field is built: the excerpt is redacted across
        # line breaks (a wrapped key, a PEM block), and every secret and user name seen anywhere in the
        # log is then masked wherever it appears again (evidence lines, fields, the title).
        yield from redactor.redact_numbered(lines)

    probe: MachineProbe | None = None
    if options.env_here:
        from nforensics.envprobe import interpreter
        from nforensics.envprobe import probe as run_probe

        probe = run_probe(interpreter(options.python))
    log_context = scan_log(learned(log.lines()), analysis)
    if options.redact:  # after the whole log taught the redactor its secrets: the fields start out redacted
        from nforensics.ci import redact_analyses

        analysis = redact_analyses([analysis], redactor)[0]
    report_input = ReportInput(
        analysis=analysis,
        log=log_context,
        instance=options.instance,
        repro_name=Path(options.repro).name if options.repro else None,
        repro_text=repro_text,
        journal_table=journal_table,
        probe=probe,
    )
    decided = build_report(report_input, redactor)
    form = issue_form(decided)
    markdown = render_markdown(form)
    report = Report(form=form, text=markdown, markdown=markdown, duplicates=duplicate_notes(decided))
    if options.url:
        report.url = prefill_url(form)
    if options.format == "json":
        report.text = render_json(form, report.url.url if report.url else None)
    if options.bundle:
        _write_bundle(Path(options.bundle), options, log, report_input, report, redactor)
    return report


def stdout_text(report: Report, options: ReportOptions, output: str | None) -> str:
    """What `nforensics report` prints: with --url (Markdown) the link alone, else the report unless
    --output took it."""
    if report.url is not None and options.format == "markdown":
        return report.url.url + "\n"
    return "" if output else report.text


def write_report_file(report: Report, output: str | None, log_spec: str) -> list[str]:
    """Write the report to `output` when asked, and when a `--url` had to leave fields out (they then
    point at a Markdown file, so one must exist). Returns the notes to show the user."""
    notes: list[str] = [f"before filing: {duplicate}" for duplicate in report.duplicates]
    if output:
        write_file(output, report.text)
    if report.bundle_dir is not None:
        notes.append(f"bundle written to {report.bundle_dir}/ and {report.archive}: read its MANIFEST.md before sharing")
    if report.url is None or not report.url.left_out:
        return notes
    markdown_file = Path(output) if output and report.text == report.markdown else None
    if markdown_file is None and report.bundle_dir is not None:
        markdown_file = report.bundle_dir / "report.md"
    if markdown_file is None:
        stem = "stdin" if log_spec == "-" else Path(log_spec).stem
        markdown_file = Path(f"{stem}-report.md")
        write_file(markdown_file, report.markdown)
    notes.append(
        f"the full prefilled URL would be {report.url.full_length / 1024:.1f} KB, over GitHub's limit of about"
        f" {URL_LIMIT // 1024} KB: it leaves out {', '.join(report.url.left_out)}; paste those from {markdown_file}"
    )
    return notes


# ------------------------------------------------------------------------------------------ bundle

_REVEALS = {
    "report.md": "The bug report: error, versions, flags, ranked causes, log excerpt. No source code, no weights.",
    "env.json": "Package versions, compiler flags, NEURON_*/XLA_* variables and target from the log"
    " (and this machine's OS, Python and Neuron tools with --env-here). No source code, no weights.",
    "flags.txt": "The neuronx-cc flags of the failing run. No source code, no weights.",
    "journal.md": "The re-runs nforensics recorded (variant, verdict). No source code, no weights.",
}


# Names nforensics writes into every bundle: a log, reproducer or HLO of the same name is renamed.
_RESERVED = ("report.md", "MANIFEST.md", "env.json", "flags.txt", "journal.md")


def _check_bundle_inputs(folder: Path, hlo: str | None) -> None:
    if folder.is_symlink():
        raise InputError(f"bundle folder {folder} is a symbolic link: choose a new folder")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise InputError(f"bundle folder {folder} already exists and is not empty: choose a new folder")
    if hlo is None:
        return
    try:
        size = Path(hlo).stat().st_size
    except OSError as exc:
        raise InputError(f"HLO {hlo}: cannot read ({exc.strerror or exc})") from None
    if size > MAX_ATTACHMENT_BYTES:
        raise InputError(f"HLO {hlo} is {size >> 20} MB, more than a bundle takes; share it separately")


def _write_bundle(
    folder: Path, options: ReportOptions, log: _Log, report_input: ReportInput, report: Report, redactor: Redactor
) -> None:
    archive = folder.parent / f"{folder.name}.tar.gz"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create bundle folder {folder} ({exc.strerror or exc})") from None
    manifest: list[tuple[str, str]] = []
    counts = redactor.sharing()  # this bundle's own occurrence counts, same placeholders as the report
    taken = {name.casefold() for name in _RESERVED}  # case-folded: macOS and Windows folders ignore case

    def member(name: str, own: bool = False) -> str:
        """A member name for a file the user named (a log called report.md must not replace the report)."""
        if own:
            return name
        name = name.lstrip(".") or "file"  # no hidden files, no `..`
        candidate, n = name, 1
        while candidate.casefold() in taken:
            candidate = f"{'input' if n == 1 else f'input{n}'}-{name}"
            n += 1
        taken.add(candidate.casefold())
        return candidate

    def write(name: str, data: str | bytes, reveals: str, own: bool = False) -> None:
        name = member(name, own)
        with _create(folder / name) as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
        manifest.append((name, reveals))

    write("report.md", report.markdown, _REVEALS["report.md"], own=True)

    log_name = member(counts.redact(log.name))
    with io.TextIOWrapper(_create(folder / log_name), encoding="utf-8") as out:
        for text in counts.redact_lines(text for _number, text in log.lines()):
            out.write(text + "\n")
    manifest.append(
        (
            log_name,
            "The failing log" + (", redacted" if options.redact else ", NOT redacted")
            + ". It can quote source lines from tracebacks and op names of the model; no weights.",
        )
    )

    environment = report_input.analysis.environment.model_dump(mode="json")
    machine = report_input.probe.model_dump(mode="json") if report_input.probe else None
    env_json = json.dumps({"from_log": environment, "this_machine": machine}, indent=2) + "\n"
    write("env.json", counts.redact(env_json), _REVEALS["env.json"], own=True)

    flags = report_input.analysis.environment.compiler_flags
    if flags:
        write("flags.txt", counts.redact("\n".join(flags) + "\n"), _REVEALS["flags.txt"], own=True)
    if options.repro and report_input.repro_text is not None:
        embedded = len(report_input.repro_text.encode()) <= REPRO_EMBED_BYTES
        write(
            counts.redact(Path(options.repro).name),
            counts.redact(report_input.repro_text),
            "The reproducer: source code you wrote" + (" (also embedded in report.md)." if embedded else ".")
            + " No weights unless the script itself loads them from elsewhere.",
        )
    if options.hlo:
        _copy_hlo(Path(options.hlo), counts, write)
    if report_input.journal_table:
        write("journal.md", counts.redact(report_input.journal_table.strip() + "\n"), _REVEALS["journal.md"], own=True)

    write("MANIFEST.md", _manifest(folder.name, manifest, counts, report.form), "This list.", own=True)
    _archive(folder, archive)
    report.bundle_dir, report.archive = folder, archive


def _copy_hlo(path: Path, counts: Redactor, write) -> None:
    data = path.read_bytes()
    reveals = "The HLO graph: it reveals the model structure (ops, shapes, layer names), not the weights"
    if is_binary(data):
        # Protobufs: secrets (source paths with user names) masked byte for byte, so the file still loads.
        write(counts.redact(path.name), counts.redact_bytes(data), reveals + "; binary, masked in place.")
    else:
        write(counts.redact(path.name), counts.redact(data.decode("utf-8", errors="replace")), reveals + ".")


def _manifest(name: str, files: list[tuple[str, str]], counts: Redactor, form: IssueForm) -> str:
    rows = "\n".join(f"| {cell(code_span(file))} | {cell(reveals)} |" for file, reveals in files)
    totals = counts.summary()
    if not form.redacted:
        redaction = "**Not redacted (--no-redact).** Read every file before sharing."
    elif totals:
        redaction = "Redacted offline before writing (occurrences by kind across the bundle): " + ", ".join(
            f"{kind} ×{count}" for kind, count in totals.items()
        )
    else:
        redaction = "Redacted offline before writing: nothing to mask was found."
    return (
        f"# nforensics bundle {code_span(name)}\n\n"
        "Everything here was written by `nforensics report --bundle`. Read it before you share it; the"
        f" archive {code_span(name + '.tar.gz')} beside this folder holds the same files.\n\n"
        "| file | what it reveals |\n|---|---|\n"
        f"{rows}\n| `MANIFEST.md` | This list. |\n\n"
        "Model weights are never included. Source code is included only as the reproducer you passed.\n\n"
        f"{redaction}\n\n"
        "To share privately instead of on a public issue, send the archive to aws-neuron-support@amazon.com"
        " and mention the issue.\n\n"
        f"Report: {redaction_note(form)}\n"
    )


def _create(path: Path) -> io.BufferedWriter:
    """A new file, never through a symbolic link and never over an existing file (something planted in
    the folder while the bundle is written makes it fail instead of writing elsewhere)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.fdopen(os.open(path, flags, 0o644), "wb")
    except OSError as exc:
        raise InputError(f"cannot write {path} ({exc.strerror or exc})") from None


def _archive(folder: Path, archive: Path) -> None:
    """A reproducible .tar.gz of the folder (sorted names, no owners or times), so two runs compare equal.

    Only the regular files nforensics wrote go in (a symbolic link is never followed or stored), and the
    archive is written to a new temporary file renamed over its name, so a link planted at that name
    is replaced, not written through."""

    def clean(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(folder, arcname=folder.name, recursive=False, filter=clean)
        for path in sorted(folder.iterdir()):
            if path.is_symlink() or not path.is_file():
                continue
            tar.add(path, arcname=f"{folder.name}/{path.name}", filter=clean)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{archive.name}.", dir=archive.parent)
    try:
        with os.fdopen(descriptor, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
            out.write(buffer.getvalue())
        os.chmod(temporary, 0o644)
        os.replace(temporary, archive)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
