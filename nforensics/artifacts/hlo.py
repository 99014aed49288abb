"""Read an HLO module from a file: text (.hlo, .txt) or a serialized HloModuleProto / HloProto (.pb), either of
them gzipped (.gz). The form is decided by the content, not the name: a compile cache's model.hlo_module.pb and
an `--xla_dump_hlo_as_text` file named anything are both read. Every failure is an InputError naming the file.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path

from nforensics.artifacts.hlo_facts import hlo_report
from nforensics.artifacts.hlo_models import HloDiff, HloModule, HloReport
from nforensics.errors import InputError

MAX_BYTES = 2 << 30  # a module's text or proto, after gunzip: past this it is not read
_GZIP = b"\x1f\x8b"


def load_bytes(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The file's bytes, gunzipped when they are gzip (at most `limit` once unpacked, so a small .gz cannot fill
    memory)."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not an HLO file") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    if not data.startswith(_GZIP):
        return data
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit)
    except zlib.error:
        raise InputError(f"{path}: a damaged or truncated gzip file") from None
    if inflater.unconsumed_tail:
        raise InputError(f"{path}: more than {_size(limit)} once unpacked; not read")
    if not inflater.eof:
        raise InputError(f"{path}: a truncated gzip file")
    return out


def is_text(data: bytes) -> bool:
    return data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"HloModule")


def _size(limit: int) -> str:
    return f"{limit >> 30} GB" if limit >= 1 << 30 else f"{limit >> 20} MB"


def read_module(path: Path, limit: int = MAX_BYTES) -> HloModule:
    data = load_bytes(path, limit)
    if _is_text_module(data, path):
        return _text_module(data, path)
    from nforensics.artifacts.hlo_proto import parse_proto

    return parse_proto(data, str(path))


def _is_text_module(data: bytes, path: Path) -> bool:
    """True for HLO text, False for what may be a proto; InputError for neither."""
    if not data.strip():
        raise InputError(f"{path}: empty file, not an HLO module")
    if is_text(data):
        return True
    if _looks_like_text(data):
        raise InputError(f"{path}: not an HLO module (text that does not start with `HloModule`)")
    return False


def _text_module(data: bytes, path: Path) -> HloModule:
    from nforensics.artifacts.hlo_text import parse_text

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: HLO text that is not UTF-8 (byte {error.start})") from None
    return parse_text(text.lstrip("\ufeff"), str(path))


def _looks_like_text(data: bytes) -> bool:
    head = data[:4096]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 4:  # not a character cut at the 4096-byte mark
            return False
    return b"\x00" not in head and all(byte >= 0x20 or byte in b"\t\r\n\f" for byte in head)


def read_hlo(path: Path, limit: int = MAX_BYTES, named: Sequence[str] = ()) -> HloReport:
    """The facts of the HLO module in `path` (`nforensics hlo FILE`); `limit` bounds its size once unpacked;
    `named` picks ops to show with their source lines (`--op NAME`). A proto's facts are gathered as it is
    decoded, without its records (hlo_proto_stream.py)."""
    data = load_bytes(path, limit)
    if _is_text_module(data, path):
        return hlo_report(_text_module(data, path), str(path), named)
    from nforensics.artifacts.hlo_proto_stream import proto_report

    return proto_report(data, str(path), named)


def diff_hlo(a: Path, b: Path) -> HloDiff:
    """What changed between the modules in `a` and `b` (`nforensics hlo diff A B`)."""
    from nforensics.artifacts.hlo_diff import diff_reports

    return diff_reports(read_hlo(a), read_hlo(b))

