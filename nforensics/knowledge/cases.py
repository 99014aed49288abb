"""The case base: public issue threads about Neuron failures (cases/*.jsonl, one Case per line), and the cases a
signature pack adds in its own cases/ folder (a company's internal tracker, in the same schema).

Read when first needed, not on import: `explain` pays for it only when it looks for similar reports."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from nforensics.defaults import new_dict, new_list
from nforensics.errors import InputError
from nforensics.knowledge import KNOWLEDGE_DIR, KnowledgeBase, invalid
from nforensics.knowledge.schema import Strict

CASES_DIR = KNOWLEDGE_DIR / "cases"


class Case(Strict):
    """One public issue thread about a Neuron failure (nforensics/knowledge/cases/*.jsonl, one per line).

    The thread's own paste is not stored: `templates` are its error lines masked by the project's own
    masking (nforensics/masking.py), which is what matching needs. `answer` and `workaround` are what the
    maintainers (or the thread's resolution) said, written in the project's own words."""

    repo: str
    number: int
    url: str
    title: str
    state: Literal["open", "closed"] | None = None
    opened: str | None = None  # YYYY-MM-DD
    closed: str | None = None
    versions: dict[str, str] = Field(default_factory=new_dict)
    instance: str | None = None
    component: str
    family: str
    signature: str | None = None
    codes: list[str] = Field(default_factory=new_list)
    templates: list[str]
    # Where the error was raised (diagnose/similar.py failure_site): the deepest frames as paths inside their
    # packages with the function, and the exception class. Structure, not the paste's text.
    frames: list[str] = Field(default_factory=new_list)
    exception: str | None = None
    answer: str | None = None
    workaround: str | None = None
    fixed_in: str | None = None
    maintainer_answered: bool = False

    @model_validator(mode="after")
    def _github_thread(self) -> "Case":
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", self.repo):
            raise ValueError(f"repo {self.repo!r} is not owner/name")
        if not re.fullmatch(rf"https://github\.com/{re.escape(self.repo)}/(?:issues|pull)/{self.number}", self.url):
            raise ValueError(f"url {self.url!r} is not issue or pull request {self.number} of {self.repo}")
        if not self.templates:
            raise ValueError("a case needs at least one message template to be matched by")
        return self


def case_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def read_cases(path: Path) -> list[Case]:
    """Every case of one file; a bad line is an InputError naming the file, line and field."""
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            cases.append(Case.model_validate_json(line))
        except ValidationError as exc:
            raise invalid(f"{path}:{number}", exc, whole="(line)") from None
    return cases


@cache
def cases_for(folders: tuple[str, ...]) -> tuple[Case, ...]:
    """The built-in cases, then those in each pack folder's cases/ (a later one replaces an earlier thread)."""
    found: dict[tuple[str, int], Case] = {}
    for folder in (CASES_DIR, *(Path(f) / "cases" for f in folders)):
        for path in case_files(folder):
            for case in read_cases(path):
                found[(case.repo, case.number)] = case  # a pack's case replaces a built-in one of the same thread
    return tuple(found.values())


def load_cases(kb: KnowledgeBase) -> tuple[Case, ...]:
    """The built-in cases, then each pack's, for the packs this knowledge base was built with."""
    return cases_for(kb.pack_folders)


def find_case(cases: tuple[Case, ...], reference: str) -> Case:
    """The case `owner/name#N` or `name#N` names; an InputError (exit 2) when there is none."""
    name, _, number = reference.rpartition("#")
    for case in cases:
        if number.isdigit() and int(number) == case.number and name in (case.repo, case.repo.split("/")[-1]):
            return case
    raise InputError(f"no public report {reference!r} in the case base (search with `nforensics cases WORDS`)")
