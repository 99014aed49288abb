"""The one exception type the CLI turns into `nforensics: <message>` on stderr and an exit code (2 unless said)."""

EXIT_USAGE = 2  # usage or input error, or an output that could not be written; explain's 0/1: nforensics.ci
EXIT_INTERRUPTED = 130  # 128 + SIGINT: ^C


class InputError(Exception):
    """Bad input or usage: a missing file, a binary file, a malformed signature pack, ... `exit_code` is what
    the process exits with: 2 (usage or input), or a shell's own code where one is meant (127: a command
    that is not there)."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def install_extra(extra: str) -> str:
    """How to add an optional extra, said the same way by every message that needs one: nforensics has no
    package index release yet, so from its repository."""
    return f"install the {extra} extra (in a checkout of nforensics: pip install '.[{extra}]')"
