"""Confirmation by re-running: plan variants of a reproducer, run them (a local pool of NeuronCore slots, or
Ray past one host), judge each run with nforensics' own diagnosis (the oracle) and journal every result in
SQLite.

oracle.py judges one run; runner.py runs one variant and journals them through an Experiment; slots.py sizes
the pool (NeuronCores from neuron-ls, host memory for compiles) and spots runs starved of resources;
backends.py is the local pool, ray_backend.py the Ray one (imported only for --backend ray); journal.py
stores runs and exports them; strategies.py drives sweeps, bisection, delta debugging and hypothesis checks;
plan.py reads TOML plans and command-line settings; commands.py turns results into tables, JSON and a
progress bar for the CLI.
"""
