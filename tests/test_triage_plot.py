"""`triage --plot FILE.png|.svg` (issue 18): the top failure groups over time, drawn with matplotlib.

The SVG keeps its text as text and each group's line carries the group's fingerprint as id, so the chart
is read back here: one line per top group of the table, labelled by its title, one point per day of the
runs read, raised on exactly the days the group was seen. Skipped without matplotlib (the `plot` extra).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from datetime import date
from pathlib import Path

import pytest

from test_triage import EXPECTED, SAMPLE_ROLES, SAMPLES, _at, build_tree, invoke

pytest.importorskip("matplotlib")

SVG = "{http://www.w3.org/2000/svg}"
FIRST_DAY, LAST_DAY = date(2024, 1, 10), date(2024, 2, 12)  # of the dated tree of test_triage.py


def line_points(svg: ElementTree.Element, fingerprint: str) -> list[tuple[float, float]]:
    """The (x, y) of each point of a group's line, left to right (SVG's y grows downwards)."""
    line = svg.find(f".//{SVG}g[@id='{fingerprint}']/{SVG}path")
    assert line is not None, f"no line for {fingerprint}"
    return [(float(x), float(y)) for x, y in re.findall(r"[ML] (-?[\d.]+) (-?[\d.]+)", line.get("d", ""))]


def test_the_svg_has_a_line_per_top_group_raised_on_the_days_it_was_seen(tmp_path):
    fingerprints = build_tree(tmp_path / "logs", SAMPLE_ROLES)
    chart = tmp_path / "trend.svg"
    code, out = invoke(str(tmp_path / "logs"), "--no-store", "--jobs", "1", "--format", "json", "--plot", str(chart))
    assert code == 0, out
    groups = json.loads(out)["groups"]
    svg = ElementTree.parse(chart).getroot()
    assert svg.tag == f"{SVG}svg"
    texts = ["".join(element.itertext()) for element in svg.iter(f"{SVG}text")]
    assert "runs per day" in texts
    legend = [text for text in texts if text.endswith("]")]
    assert legend == [f"{g['code']}: {g['title']} [{g['fingerprint']}]" if g["code"] and g["code"] not in g["title"]
                      else f"{g['title']} [{g['fingerprint']}]" for g in groups]  # the table's order
    span = (LAST_DAY - FIRST_DAY).days + 1
    for role, (_, first, last, *_) in EXPECTED.items():
        points = line_points(svg, fingerprints[role])
        assert len(points) == span, role  # a point per day, the empty ones included
        zero = max(y for _, y in points)
        raised = {index for index, (_, y) in enumerate(points) if y < zero}
        assert raised == {(date.fromisoformat(day) - FIRST_DAY).days for day in (first, last)}, role


def test_a_png_is_written_and_a_long_span_is_counted_per_week(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    for number, day in enumerate(("2024-01-03", "2024-03-20", "2024-06-26")):  # 25 weeks apart, Wednesdays
        log = folder / f"run{number}.log"
        log.write_text(SAMPLE_ROLES["B"].read_text(encoding="utf-8"), encoding="utf-8")
        _at(log, day)
    png, svg = tmp_path / "trend.png", tmp_path / "trend.svg"
    assert invoke(str(folder), "--no-store", "--jobs", "1", "--plot", str(png))[0] == 0
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert int.from_bytes(data[16:20], "big") > 600 and int.from_bytes(data[20:24], "big") > 300  # width, height
    code, out = invoke(str(folder), "--no-store", "--jobs", "1", "--format", "json", "--plot", str(svg))
    [group] = json.loads(out)["groups"]
    root = ElementTree.parse(svg).getroot()
    assert "runs per week" in ["".join(element.itertext()) for element in root.iter(f"{SVG}text")]
    points = line_points(root, group["fingerprint"])
    assert len(points) == 26  # the weeks from Monday 2024-01-01 to Monday 2024-06-24
    zero = max(y for _, y in points)
    assert [index for index, (_, y) in enumerate(points) if y < zero] == [0, 11, 25]


def test_plot_without_matplotlib_says_which_extra_to_install_before_any_work(tmp_path, monkeypatch):
    import importlib.util

    from nforensics.triage import scan as scan_module

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    monkeypatch.setattr(scan_module, "scan", lambda *a, **k: pytest.fail("analysed before refusing"))
    code, out = invoke(str(SAMPLES), "--no-store", "--plot", str(tmp_path / "trend.png"))
    assert (code, out) == (2, "--plot needs matplotlib, which is not installed: install the plot extra (in a checkout of nforensics: pip install '.[plot]')")
    assert not Path(tmp_path / "trend.png").exists()
