"""What the assembler carries from one line to the next: the log being built, the blocks still open, and
the caps that keep its memory bounded whatever the size of the input."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from nforensics.parse.normalise import unwrap
from nforensics.parse.shapes import ProducerLine
from nforensics.records import (
    BirVerification,
    Diagnostic,
    Environment,
    Frame,
    IceReport,
    ParsedLog,
    PythonTraceback,
    SourceLine,
    StackTrace,
)

if TYPE_CHECKING:
    from nforensics.parse.gates import CatalogueAnchors

MAX_RECORDS = 2000  # per record kind; a huge log of repeated errors keeps the first ones
MAX_RETAINED = 20000  # lines kept for evidence and pattern matching
# Physical lines whose decoded lines are numbered apart (a JSON log with a multi-line message on every line):
# past it, a physical line's lines share its number, and the map back (ParsedLog.decoded_lines) stays bounded.
MAX_DECODED_LINES = 100_000
MAX_SKELETONS = 50000  # bound on remembered uneventful line shapes
RECENT_CANDIDATES = 2000  # plain candidate lines kept from the end of the input (failures come last)
CONTEXT_LINES = 3  # plain lines kept after a line that carried a record, for wrapped runtime details
CONTINUATION_LINES = 16  # a coded message spans at most this many physical lines
# The word gate (nforensics/parse/gates.py) only pays on big logs: the first lines of any input are all parsed,
# so a pasted log's failure line is never lost for lacking a gate word. A file this big was written by the tools,
# not pasted and edited: its head is shorter (its lines are the producers' own, and the gate knows their words).
UNGATED_LINES = 20000
BIG_FILE = 64 << 20  # bytes on disk
BIG_FILE_UNGATED_LINES = 2000
CUT_LINE = 16  # a last line shorter than this, without a space, is a paste cut mid-line
HANG_TAIL = 5  # an operation left open this close to the end of the log, with no error after it, is a hang
WAIT_REPEATS = 4  # a log that ends on the same "waiting for ..." line printed this often is waiting forever


class AssemblerState:
    """The state the assembler's readers share (nforensics/parse/assemble.py puts them together)."""

    def __init__(self, source: str, ungated: int, anchors: Callable[[], CatalogueAnchors] | None = None) -> None:
        self.ungated = ungated  # the lines read whatever their words (UNGATED_LINES)
        self._anchor_source = anchors  # the catalogue's anchors, asked for at the first gated line
        self._anchors: CatalogueAnchors | None = None
        self.candidate: Callable[[str], bool] | None = None  # gates.candidate_test for them, built at first use
        self.log = ParsedLog.model_construct(source=source, environment=Environment.model_construct())
        self.retained: list[SourceLine] = []  # lines that carried a record or read like a failure
        self.recent: deque[tuple[int, str]] = deque(maxlen=RECENT_CANDIDATES)  # the latest other candidates
        self.decoded_extra = 0  # lines of text beyond the first that physical lines decoded into, so far
        self.piece_order: dict[tuple[int, str], int] = {}  # past MAX_DECODED_LINES: each shared line's place in it
        self.open_diagnostic: Diagnostic | None = None
        self.unbracketed_codes: set[int] = set()  # lines whose code was printed without its brackets
        self.open_ice: IceReport | None = None
        self.ice_field: str | None = None
        self.version_block: list[tuple[int, str]] = []  # the ICE banner's version items met with no banner open
        self.open_bir: BirVerification | None = None
        self.open_traceback: PythonTraceback | None = None
        self.in_cut_here = False
        self.open_stack: StackTrace | None = None  # native or TorchScript frames being collected
        self.frame_awaiting_code: Frame | None = None  # a Python frame whose source line may come next
        self.named_by_header: PythonTraceback | None = None  # an IPython traceback its header named
        self.innermost_first: PythonTraceback | None = None  # a faulthandler dump, its frames printed innermost first
        self.other_threads: list[PythonTraceback] = []  # faulthandler's threads other than the one that crashed
        self.crashed_thread_seen = False  # ... and its `Current thread` (or `Stack`): the one that did
        self.root_path = ""  # the last path of neuronx-cc's `root = ` chain, which climbs one folder a line
        self.open_apis: dict[str, int] = {}  # NRT API trace: api -> line of its API:IN without API:OUT yet
        self.open_compile: int | None = None  # line of a compile start with no end seen yet
        self.compile_command = False  # that line is the compiler's command line, not its progress
        self.compile_ended = False  # a compile the log opened ended before: the log is a run's, not a quote
        self.elided_at = 0  # the last line that was an elision (`...`, `[snip]`): output its author left out
        self.resolving: int | None = None  # line where pip was last seen backtracking through releases
        self.fetched_versions: dict[str, set[str]] = {}  # pip: package -> the releases whose wheels it fetched
        self.resolver_steps = 0  # pip wheels fetched
        self.warned: ProducerLine | None = None  # the Python warning on the line before, whose source may follow
        self.message_awaited: PythonTraceback | None = None  # an exception printed with its message below it
        self.last_error = 0  # line of the last record that reported an error
        self.last_text = 0  # line of the last non-blank line
        self.last_prompt = 0  # line of the last shell prompt: a command started there
        self.tail: deque[tuple[int, str]] = deque(maxlen=2)  # the last two non-blank segments: how the log ends
        self.rich_fold: list[str] = []  # the pieces of a path rich folded over the panel rows read last
        self.waiting: tuple[str, int] | None = None  # the latest "waiting ..." line's shape (digits out), how often
        self.waiting_line = ""  # the latest whole "waiting ..." line
        self.uneventful: dict[str, int] = {}  # the shape of a line that yielded no record -> that line
        self.repeats: deque[tuple[int, int]] = deque(maxlen=RECENT_CANDIDATES)  # (line, earlier line of its shape)
        self.last_line = 0
        self.context_left = 0  # plain lines still kept after the last line that carried something

    # ------------------------------------------------------------------ bookkeeping

    def anchors(self) -> CatalogueAnchors | None:
        """The catalogue's anchors (None: parsing with no catalogue)."""
        if self._anchor_source is not None:
            self._anchors, self._anchor_source = self._anchor_source(), None
        return self._anchors

    def _add(self, kind: list, record: object) -> None:
        if len(kind) < MAX_RECORDS:
            kind.append(record)
        else:
            self.log.truncated = True

    def _retain(self, number: int, raw: str) -> None:
        if self.retained and self.retained[-1].line == number and self.retained[-1].text == raw:
            return
        if len(self.retained) < MAX_RETAINED:
            body = unwrap(raw).line
            self.retained.append(SourceLine.model_construct(line=number, text=raw, body=body if body != raw else None))
        else:
            self.log.truncated = True

    def _close_blocks(self) -> None:
        self.open_diagnostic = None
        self.open_ice = None
        self.ice_field = None
        self.open_bir = None
        self.open_traceback = None
