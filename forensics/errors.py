"""The one exception type the CLI turns into `nforensics: <message>` on stderr and exit code 2."""


class InputError(Exception):
    """Bad input or usage: a missing file, a binary file, a malformed signature pack, ..."""
