"""The signature catalogue: `nforensics codes` (a table, or one full entry like `ruff rule`) and the
docs/signatures/ pages, which are the same Markdown entry written to files.

Input is the loaded signatures (nforensics.knowledge.schema.Signature) and what their fixes resolve to
(nforensics.diagnose.versions.catalogue_fixed_in, by signature id), output is text; nothing here prints.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping, Sequence

from nforensics.knowledge import KnowledgeBase
from nforensics.knowledge.order import tier_of
from nforensics.knowledge.family_schema import Family
from nforensics.knowledge.schema import EvidenceRule, Signature
from nforensics.records import FixedIn
from nforensics.render.markdown import cell, code_block, code_span

# Where a page in docs/signatures/ finds the sample logs (sample_logs/ at the top of the repository).
SAMPLE_LOG_LINK = "../../sample_logs/"


def codes_of(signature: Signature) -> list[str]:
    """The upstream code first, then its aliases (legacy codes, NRT status names)."""
    return ([signature.code] if signature.code else []) + [a for a in signature.aliases if a != signature.code]


def select(
    signatures: Iterable[Signature],
    *,
    component: str | None = None,
    prefix: str | None = None,
    status: str | None = None,
) -> list[Signature]:
    """Filter for `nforensics codes`: component and status exactly, the code prefix against the code and
    aliases (case-insensitive), sorted by code then id."""
    picked = [
        s
        for s in signatures
        if (not component or s.component == component)
        and (not status or s.status == status)
        and (not prefix or any(c.upper().startswith(prefix.upper()) for c in codes_of(s)))
    ]
    return sorted(picked, key=lambda s: (s.code or "~", s.id))


def lookup(kb: KnowledgeBase, key: str) -> list[Signature]:
    """The signature with this id, else every signature printed with this code or alias (one code can
    have several causes, told apart by their message)."""
    by_id = [s for s in kb.signatures if s.id == key.strip().lower()]
    return by_id or list(kb.by_code.get(key.strip().upper(), ()))


def _row(signature: Signature, fixed_in: FixedIn | None) -> dict[str, object]:
    return {
        "id": signature.id,
        "code": signature.code,
        "aliases": signature.aliases,
        "component": signature.component,
        "severity": signature.severity,
        "status": signature.status,
        "title": signature.title,
        "summary": signature.summary,
        "fixed_in": fixed_in.summary if fixed_in else None,
    }


def render_table(
    signatures: Sequence[Signature], fixed_in: Mapping[str, FixedIn], format: str = "text", width: int = 120
) -> str:
    """The `nforensics codes` listing: a rich table (code +N = N more aliases), or a JSON array (with each
    signature's fix from `fixed_in`, by signature id)."""
    if format == "json":
        return json.dumps([_row(s, fixed_in.get(s.id)) for s in signatures], indent=2) + "\n"
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False, pad_edge=False, box=None, header_style="bold")
    for column in ("code", "signature", "component", "status"):
        table.add_column(column, no_wrap=True)
    table.add_column("title", overflow="fold", min_width=20)
    for s in signatures:
        codes = codes_of(s)
        code = (codes[0] + (f" +{len(codes) - 1}" if len(codes) > 1 else "")) if codes else "-"
        table.add_row(code, s.id, s.component, s.status, s.title)
    out = io.StringIO()
    Console(file=out, width=width, force_terminal=False, no_color=True).print(table)
    lines = "\n".join(line.rstrip() for line in out.getvalue().splitlines())
    return lines + f"\n\n{len(signatures)} signature(s). Full entry: nforensics codes <code or signature>\n"


def render_entries(signatures: Sequence[Signature], fixed_in: Mapping[str, FixedIn], format: str = "text") -> str:
    """`nforensics codes NCC_EOOM001`: every matching entry in full (Markdown, as `ruff rule` prints), or JSON."""
    if format == "json":
        return json.dumps([s.model_dump(mode="json", exclude_none=True) for s in signatures], indent=2) + "\n"
    return "\n\n---\n\n".join(entry_markdown(s, fixed_in.get(s.id)) for s in signatures) + "\n"


def _evidence_line(rule: EvidenceRule) -> str:
    if rule.pattern:
        what = f"line matches {code_span(rule.pattern)}"
    elif rule.env:
        what = f"env {code_span(rule.env + ('=' + rule.value if rule.value else ''))}"
    elif rule.flag:
        what = f"compiler flag {code_span(rule.flag)}"
    elif rule.target:
        what = f"target {code_span(rule.target)}"
    elif rule.package:
        what = f"{code_span(rule.package)} older than {rule.below}"
    else:
        name = rule.field or rule.fact or rule.hlo or ""
        bounds = [f"= {rule.equals}" if rule.equals is not None else "", f">= {rule.min:g}" if rule.min is not None else "",
                  f"<= {rule.max:g}" if rule.max is not None else ""]
        kind = "field" if rule.field else "HLO fact" if rule.hlo else "fact"
        what = f"{kind} {code_span(name)} {' '.join(b for b in bounds if b)}".rstrip()
    absent = " is absent" if rule.absent else ""
    return f"- {rule.weight:+g} when {what}{absent}: {rule.note}"


def _recognised(signature: Signature) -> list[str]:
    m = signature.match
    out = ["## How it is recognised", ""]
    if m.codes:
        out.append(f"- coded diagnostic {', '.join(code_span(c) for c in m.codes)}")
    out += [f"- a line matching {code_span(p)}" for p in m.patterns]
    if m.nrt_statuses:
        out.append(f"- runtime status {', '.join(code_span(s) for s in m.nrt_statuses)}")
    if m.exit_codes:
        out.append(f"- exit code {', '.join(str(c) for c in m.exit_codes)}")
    if m.message:
        out.append(f"- only when the message matches {code_span(m.message)}")
    if not m.claims_warnings:
        out.append("- only on lines printed at error level: the same words in a WARN or INFO line are not this failure")
    if not m.resemblance:
        out.append("- never by resemblance to its message: other failures print the same wording")
    out.append(f"- recognition order: tier {code_span(tier_of(m))}" + (" (set in the file)" if m.tier else "")
               + (" (an envelope: ranked after the root cause)" if m.envelope else "")
               + (f", claimed ahead of {', '.join(code_span(other) for other in m.before)}" if m.before else ""))
    if signature.fields:
        out += ["", "Fields taken from the message:", "", "| field | type | example |", "|---|---|---|"]
        out += [
            f"| {cell(name)} | {kind} | {cell(signature.test.fields.get(name, ''))} |"
            for name, kind in signature.fields.items()
        ]
    return out


def hypotheses_markdown(signature: Signature | Family) -> list[str]:
    out = ["## Hypotheses", ""]
    for number, h in enumerate(signature.hypotheses, 1):
        out += [f"### {number}. {h.title}", "", f"{code_span(h.id)}, prior {h.prior:g}"]
        if h.explanation:
            out += ["", h.explanation]
        if h.evidence:
            out += ["", "Evidence:", ""] + [_evidence_line(r) for r in h.evidence]
        if h.check:
            out += ["", f"Check: {h.check}"]
        if h.confirm:
            out += ["", f"Confirm by re-running (expected verdict {h.confirm.expect}): {h.confirm.description}"]
        out.append("")
    return out


def workarounds_markdown(signature: Signature | Family) -> list[str]:
    out = ["## Workarounds", ""]
    for w in signature.workarounds:
        out += [f"### {w.title}", ""]
        if w.description:
            out += [w.description, ""]
        if w.code:
            out += [code_block(w.code.strip("\n"), w.language), ""]
    return out


def entry_markdown(signature: Signature, fixed_in: FixedIn | None) -> str:
    """The full entry: what it is, why it happens, how it is recognised, hypotheses, workarounds with code,
    fixed-in (`fixed_in`: the fix with its SDK release looked up), references and the sample log. Used by
    `nforensics codes X` and for docs/signatures/<id>.md."""
    codes = codes_of(signature)
    title = f"{codes[0]}: {signature.title}" if codes else signature.title
    out = [f"# {title}", ""]
    out.append(
        f"Signature {code_span(signature.id)} · component **{signature.component}** · {signature.severity}"
        f" · status **{signature.status}**"
    )
    if len(codes) > 1:
        out += ["", f"Also printed as: {', '.join(code_span(c) for c in codes[1:])}"]
    out += ["", "## What it is", "", signature.summary.strip(), "", "## Why it happens", "", signature.meaning.strip(), ""]
    out += _recognised(signature) + [""]
    if signature.hypotheses:
        out += hypotheses_markdown(signature)
    if signature.workarounds:
        out += workarounds_markdown(signature)
    out += ["## Fixed in", ""]
    sentence = fixed_in.summary if fixed_in else None
    if sentence and signature.fixed_in:
        note = f" {signature.fixed_in.note}" if signature.fixed_in.note else ""
        out += [sentence[0].upper() + sentence[1:] + "." + note, ""]
    else:
        out += [f"No release is known to fix it (status: {signature.status}).", ""]
    if signature.references:
        out += ["## References", ""] + [f"- [{r.title}]({r.url})" for r in signature.references] + [""]
    out += ["## Example", "", f"Sample log: [{signature.sample_log}]({SAMPLE_LOG_LINK}{signature.sample_log})"]
    return "\n".join(out).rstrip() + "\n"


def index_markdown(signatures: Sequence[Signature]) -> str:
    """docs/signatures/index.md: one row per signature, grouped by component."""
    out = [
        "# Signature catalogue",
        "",
        "Every failure nforensics recognises, generated from nforensics/knowledge/signatures/*.toml",
        "(do not edit by hand: regenerate with `python tools/gen_signature_docs.py`).",
        "The same entries print in the terminal with `nforensics codes <code or signature>`.",
        "",
        f"{len(signatures)} signatures.",
    ]
    for component in ("compiler", "runtime", "framework", "nki", "environment"):
        members = [s for s in signatures if s.component == component]
        if not members:
            continue
        out += ["", f"## {component} ({len(members)})", "", "| code | signature | status | title |", "|---|---|---|---|"]
        out += [
            f"| {cell(', '.join(codes_of(s)) or '-')} | [{s.id}]({s.id}.md) | {s.status} | {cell(s.title)} |"
            for s in members
        ]
    return "\n".join(out) + "\n"


def docs_pages(signatures: Sequence[Signature], fixed_in: Mapping[str, FixedIn]) -> dict[str, str]:
    """File name (relative to docs/signatures/) -> content, for the generator script and the staleness test."""
    ordered = select(signatures)
    pages = {f"{s.id}.md": entry_markdown(s, fixed_in.get(s.id)) for s in ordered}
    pages["index.md"] = index_markdown(ordered)
    return pages
