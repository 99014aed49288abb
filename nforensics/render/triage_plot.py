"""`triage --plot FILE.png|.svg`: the top failure groups over time, one line per group, labelled by its title.

matplotlib is an optional extra (`plot`, about 80 MB of site-packages) and
is imported only here, only for --plot. The figure is drawn on the non-interactive Agg canvas without
pyplot: no display, no GUI toolkit and no global figure state, so it works on a CI runner or a server.
In SVG the text stays text (searchable, readable by a test) and each group's line has its fingerprint as id.
"""

from __future__ import annotations

from pathlib import Path

from nforensics.render.triage import TriageGroup, Trend, group_name

PLOT_FORMATS = (".png", ".svg")
PLOT_GROUPS = 8  # lines on one chart: more are hard to tell apart (and the colour cycle has 10)
_LABEL = 90  # characters of a group's name in the legend; its fingerprint follows


def plot_label(group: TriageGroup) -> str:
    name = group_name(group)
    name = name if len(name) <= _LABEL else name[: _LABEL - 1] + "…"
    return f"{name} [{group.fingerprint}]"


def write_plot(path: Path, trend: Trend, groups: list[TriageGroup]) -> None:
    """Draw `groups` (the table's first, most frequent first) over `trend`'s periods into `path`."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, date2num
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(11, 4 + 0.25 * len(groups)), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    days = date2num(trend.periods)
    for group in groups:
        counts = trend.counts[group.fingerprint]
        seen = [index for index, count in enumerate(counts) if count]  # a marker where the group was seen
        (line,) = axes.plot(days, counts, marker="o", markersize=4, markevery=seen, label=plot_label(group))
        line.set_gid(group.fingerprint)
    axes.xaxis_date()
    locator = AutoDateLocator()
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylim(bottom=0)
    axes.set_ylabel(f"runs per {trend.unit}")
    axes.set_xlabel(f"{trend.unit} (UTC)")
    axes.grid(alpha=0.3)
    if groups:
        axes.set_title(f"Top {len(groups)} failure groups per {trend.unit}")
        figure.legend(loc="outside lower center", fontsize="small")
    else:
        axes.set_title("No failure groups in the runs read")
    # Every point kept (no merging of a flat run of days) and text as text, not glyph outlines.
    with matplotlib.rc_context({"path.simplify": False, "svg.fonttype": "none", "svg.hashsalt": "nforensics"}):
        figure.savefig(path, format=path.suffix.lower()[1:], dpi=120)
