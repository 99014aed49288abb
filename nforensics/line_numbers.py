"""Line numbers of a parsed log: the lines of text one physical line decoded into (a notebook's stream, a JSON
log record with its newlines escaped, a folded traceback) are numbered on from it while the log is read
(nforensics/parse/assemble.py), so that one line after another means the same in any input. ParsedLog's
`decoded_lines` holds, for each such physical line, its first number and how many more lines it held; these
read it both ways."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

from nforensics.records import ParsedLog


def physical_lines(log: ParsedLog) -> Callable[[int], int]:
    """The physical line each line number of the log's records stands for."""
    firsts = [first for first, _ in log.decoded_lines]
    before = list(accumulate((more for _, more in log.decoded_lines), initial=0))  # extra lines ahead of each

    def physical(line: int) -> int:
        index = bisect_right(firsts, line) - 1
        if index < 0:
            return line
        first, more = log.decoded_lines[index]
        return first - before[index] if line <= first + more else line - before[index + 1]

    return physical


def last_line(log: ParsedLog) -> int:
    """The number the input's last line has among the records' (total_lines counts physical lines)."""
    return log.total_lines + sum(more for _, more in log.decoded_lines)
