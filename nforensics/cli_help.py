"""How --help names what each parameter takes. typer 0.29 prints a type after every parameter
(`--verbose <bool>`, `--kb <list[Path]>`); a flag takes nothing and a list takes its element, repeated."""

from __future__ import annotations

from typing import Any, get_args


def _element(param: Any) -> str:
    """What one value of a list parameter is: `str` of list[str], `path` of list[Path]."""
    element = get_args(getattr(getattr(param, "type_descriptor", None), "annotation", None))
    return getattr(element[0], "__name__", "value").lower() if element else "value"


def _shown(text: str) -> Any:
    return lambda ctx: text


def help_metavars(command: Any) -> Any:
    """--help shows what an option takes: nothing for a flag (typer prints `--verbose <bool>`), the element
    of a repeatable option or argument (`--kb <path>...`, not `<list[Path]>`)."""
    for param in command.params:
        if getattr(param, "is_flag", False):
            param.metavar = ""
        elif getattr(param, "multiple", False) and param.metavar is None:
            param.metavar = f"<{_element(param)}>..."
        elif param.param_type_name == "argument" and param.nargs != 1:  # its name already ends in "..."
            param.display_type_rich = _shown(f"<{_element(param)}>")
    for sub in getattr(command, "commands", {}).values():
        help_metavars(sub)
    made = command.get_help_option  # --help itself is made per context, a flag like the others

    def get_help_option(ctx: Any) -> Any:
        option = made(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option
    return command
