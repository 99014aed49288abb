"""The filed forms of the bug report: Markdown shaped like the issue GitHub writes, JSON, and the prefilled
new-issue URL (cut to GitHub's length limit)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from nforensics.render.safe import markdown_text
from nforensics.render.report import FIELDS, FORM_LABELS, LEGACY_FIELDS, NO_RESPONSE, REPOSITORY, TEMPLATE, IssueForm

NEW_ISSUE_URL = f"https://github.com/{REPOSITORY}/issues/new"
URL_LIMIT = 8 * 1024  # GitHub answers 414 URI Too Long past about this


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
