"""`nforensics triage`: failures across many runs, grouped by fingerprint (docs/triage.md).

Per-file analysis (runs.py, through nforensics.pipeline) gives small results; the store (store.py) keeps
them between runs; scan.py spreads files over processes, or over a Ray cluster with ray_scan.py; frame.py
groups them with pandas. Imported only by the triage command, so `explain` never loads pandas.
"""
