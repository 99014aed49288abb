"""A real local Ray cluster for the tests, hosted by this process and not by pytest's: `python ray_cluster.py
CPUS NEURON_CORES` starts it, prints its GCS address on one line, and stops it when its stdin closes. The
`cluster` fixture of conftest.py runs it for the tests of `--backend ray` (experiments and triage).

Kept out of the test process so that no Ray daemon inherits pytest's output (a runner that waits for the end
of its output would wait for them) and a test process that dies still ends the cluster: its pipe closes.
"""

from __future__ import annotations

import logging
import sys

import ray


def main() -> None:
    cpus, cores = int(sys.argv[1]), int(sys.argv[2])
    # "local": a new instance even when RAY_ADDRESS or a `ray start` of this machine names another one.
    ray.init(address="local", num_cpus=cpus, resources={"neuron_cores": cores}, include_dashboard=False,
             log_to_driver=False, logging_level=logging.ERROR)
    try:
        print(ray.get_runtime_context().gcs_address, flush=True)
        sys.stdin.read()
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
