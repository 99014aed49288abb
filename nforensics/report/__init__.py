"""The bug report as decisions: which failure the issue is about, which workload and release the log shows,
which workarounds the failing run already had, which public reports it may repeat, and every text redacted.

nforensics/report/inputs.py reads what the report needs from the log, build.py decides the report
(release.py does the release arithmetic, workarounds.py tells tried from untried, redaction.py masks it) and
hands over a `BugReport` (model.py); nforensics/render/report*.py only formats that model. Nothing is imported
here, so render can import the model without loading the reasoning.
"""
