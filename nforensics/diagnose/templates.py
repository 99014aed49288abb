"""Group error lines that no signature knows by their Drain template, so a new failure type still shows up
as one finding ("Worker <*> lost connection to <*>", seen 64 times) instead of 64 lines or nothing.

Drain (He et al., ICWS 2017; the drain3 package) clusters log lines online with a fixed-depth parse tree:
lines of the same length and leading tokens whose tokens mostly agree share a template, differing tokens
become <*>. We mask run-specific tokens first (the fingerprint masks: paths, numbers, ids), as Drain's
authors advise, and feed only the free text. drain3 is imported here only, and only when such lines exist,
so `explain` on a recognised failure never pays for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nforensics.masking import mask

SIMILARITY = 0.4  # drain3's default: share of equal tokens for a line to join a cluster
MAX_LINES = 5000  # an input with more unrecognised error lines than this is grouped on its first ones


@dataclass
class TemplateGroup:
    template: str
    lines: list[tuple[int, str]]  # (line number, free text) of each member, in input order


def group_by_template(lines: Sequence[tuple[int, str]]) -> list[TemplateGroup]:
    """Drain clusters of the given (line number, message) pairs, in order of first appearance."""
    if not lines:
        return []
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()  # built in code: never reads a drain3.ini from the user's folder
    config.drain_sim_th = SIMILARITY
    miner = TemplateMiner(config=config)
    members: dict[int, list[tuple[int, str]]] = {}
    for number, text in lines[:MAX_LINES]:
        result = miner.add_log_message(mask(text))
        members.setdefault(result["cluster_id"], []).append((number, text))
    templates = {cluster.cluster_id: cluster.get_template() for cluster in miner.drain.clusters}
    return [TemplateGroup(templates[cluster_id], group) for cluster_id, group in members.items()]
