"""Code shape (issue 11): no module in nforensics/ over MAX_LINES lines.

A module past that size holds several responsibilities; split it by responsibility (see the splits of
parse/assemble.py, redact/, render/report*.py and artifacts/neff*.py) rather than cutting it anywhere.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nforensics"
MAX_LINES = 400

# Known debts: modules still over MAX_LINES, with their size when listed. Each entry is a module to split,
# not a licence to grow: the test fails when a listed module grows past its size, and when one is back
# under MAX_LINES (then delete its entry).
KNOWN_DEBTS: dict[str, int] = {}


def module_lengths() -> dict[str, int]:
    """Lines per module, by path relative to nforensics/ (posix separators)."""
    return {
        path.relative_to(PACKAGE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def test_no_module_is_over_the_line_limit():
    lengths = module_lengths()
    offenders = [f"nforensics/{name}: {lines} lines" for name, lines in lengths.items()
                 if lines > MAX_LINES and lines > KNOWN_DEBTS.get(name, 0)]
    assert not offenders, (
        f"modules over {MAX_LINES} lines (split them by responsibility; a known debt may not grow):\n"
        + "\n".join(offenders)
    )


def test_known_debts_are_still_debts():
    lengths = module_lengths()
    paid = [name for name in KNOWN_DEBTS if lengths.get(name, 0) <= MAX_LINES]
    assert not paid, f"no longer over {MAX_LINES} lines (or gone): delete from KNOWN_DEBTS: {paid}"
