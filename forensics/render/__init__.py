"""Output only: analyses in, text out. Each format is one module; `render` picks it by name."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from forensics.errors import InputError
from forensics.records import Analysis


def _text(analyses: Sequence[Analysis], color: bool) -> str:
    from forensics.render.terminal import render_text

    return render_text(analyses, color=color)


def _json(analyses: Sequence[Analysis], color: bool) -> str:
    from forensics.render.json import render_json

    return render_json(analyses)


RENDERERS: dict[str, Callable[[Sequence[Analysis], bool], str]] = {"text": _text, "json": _json}


def render(analyses: Sequence[Analysis], format: str, *, color: bool = False) -> str:
    try:
        renderer = RENDERERS[format]
    except KeyError:
        raise InputError(f"unknown format {format!r}; choose one of: {', '.join(RENDERERS)}") from None
    return renderer(analyses, color)
