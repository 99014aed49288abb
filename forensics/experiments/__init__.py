"""Confirmation by re-running: plan variants of a reproducer, run them (local pool now, a cluster backend
later), judge each run with nforensics' own diagnosis (the oracle) and journal every result in SQLite.

oracle.py judges one run; runner.py runs variants; journal.py stores them; strategies.py drives sweeps,
bisection, delta debugging and hypothesis checks; plan.py reads TOML plans and command-line settings;
commands.py turns results into tables, JSON and a progress bar for the CLI.
"""
