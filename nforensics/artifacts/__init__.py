"""Readers for files other than logs: NEFF executables, the compile cache, NKI kernel source.

`facts_for` turns them into flat facts (`neff.target`, `nki.sendrecv_kernel_calls`, ...) that hypothesis
evidence rules of kind `fact` test; the keys are listed in docs/artifacts.md.
"""

from __future__ import annotations

from pathlib import Path


def facts_for(neff: Path | None, source: Path | None, device: str | None) -> dict[str, object]:
    """Facts from a NEFF file and/or an NKI kernel source. Raises InputError for unreadable files.

    `device` (trn1, inf2, trn2, an instance type such as trn1.2xlarge) adds `neff.newer_than_device`.
    """
    facts: dict[str, object] = {}
    if neff is not None:
        from nforensics.artifacts.neff import neff_facts, read_neff

        facts.update(neff_facts(read_neff(neff, device=device)))
    if source is not None:
        from nforensics.artifacts.nki_source import nki_facts, read_nki_source

        facts.update(nki_facts(read_nki_source(source)))
    return facts
