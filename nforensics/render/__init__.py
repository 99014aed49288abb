"""Output only: analyses in, text out. Each format is one module; `render` picks it by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from nforensics.errors import InputError
from nforensics.records import Analysis


def _text(analyses: Sequence[Analysis], color: bool) -> str:
    from nforensics.render.terminal import render_text

    return render_text(analyses, color=color)


def _lazy(module: str, function: str) -> Callable[[Sequence[Analysis], bool], str]:
    """A format imported on first use, so `explain` loads only the formats it writes."""

    def renderer(analyses: Sequence[Analysis], color: bool) -> str:
        return getattr(importlib.import_module(module), function)(list(analyses))

    return renderer


RENDERERS: dict[str, Callable[[Sequence[Analysis], bool], str]] = {
    "text": _text,
    "json": _lazy("nforensics.render.json", "render_json"),
    "sarif": _lazy("nforensics.render.sarif", "render_sarif"),
    "github": _lazy("nforensics.render.github", "render_commands"),
    "junit": _lazy("nforensics.render.junit", "render_junit"),
    "gitlab": _lazy("nforensics.render.gitlab", "render_gitlab"),
    "markdown": _lazy("nforensics.render.markdown", "render_markdown"),
}


def check_format(format: str) -> None:
    """For the commands that print text or JSON only (env, codes, neff, cache, nki)."""
    if format not in ("text", "json"):
        raise InputError(f"unknown format {format!r}: use text or json")


def render(analyses: Sequence[Analysis], format: str, *, color: bool = False) -> str:
    try:
        renderer = RENDERERS[format]
    except KeyError:
        raise InputError(f"unknown format {format!r}; choose one of: {', '.join(RENDERERS)}") from None
    return renderer(analyses, color)
