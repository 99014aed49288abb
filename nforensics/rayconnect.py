"""Ray for `--backend ray [--address auto|ray://HOST:PORT]`, shared by the experiment commands and triage.

Ray is an optional extra (`ray`) and this module is the only one that imports it,
only when `--backend ray` is asked for: explain never loads it.

Without `--address`, Ray's own rule picks the cluster: $RAY_ADDRESS, else the one `ray start` last started on
this machine, else a new local instance, stopped at the end. With an address, or when joining a running
cluster, nforensics is one more driver and leaves the cluster running. If Ray is already initialised in this
process (a notebook, a test) it is used as it is.
"""

from __future__ import annotations

import importlib.util
import logging
import signal
import threading
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

from nforensics.errors import InputError, install_extra

BACKENDS = ("local", "ray")
_NO_RAY = f"--backend ray needs Ray, which is not installed: {install_extra('ray')}"


def check_backend(backend: str | None, address: str | None) -> str:
    """The backend `--backend` names (local when not given), checked before any work: a known one, Ray
    installed for ray, and `--address` only with ray."""
    backend = backend or "local"
    if backend not in BACKENDS:
        raise InputError(f"unknown --backend {backend!r}: use local or ray")
    if address is not None:
        if backend != "ray":
            raise InputError("--address is for --backend ray")
        if not address.strip():
            raise InputError("--address is empty: give HOST:PORT, ray://HOST:PORT or auto, or leave it out")
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise InputError(_NO_RAY)
    return backend


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError(_NO_RAY) from None
    return ray


@contextmanager
def _our_signal_handlers() -> Iterator[None]:
    """ray.init installs a C++ handler for SIGTERM that prints a stack and exits 1: the handlers this process
    had (the experiments' terminate_runs_on_signal, or Python's defaults) are put back over it."""
    caught = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    saved = {s: signal.getsignal(s) for s in caught} if threading.current_thread() is threading.main_thread() else {}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            if handler is not None:
                signal.signal(signum, handler)


class RayConnection:
    """This process as a driver of a Ray cluster (`ray`: the module). close() stops only an instance it started."""

    def __init__(self, address: str | None = None) -> None:
        self.ray = ray = import_ray()
        self._started = False
        if ray.is_initialized():
            return
        try:
            # Ray's own notices (auth token, "Started a local Ray instance", Ray Client's timeout warning)
            # would break the one-line stderr contract.
            with warnings.catch_warnings(), _our_signal_handlers():
                warnings.simplefilter("ignore")
                ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            where = address or "a local instance"
            raise InputError(f"cannot start or reach the Ray cluster at {where}: {str(exc).splitlines()[0]}") from None
        self._started = True

    def nodes(self) -> list[dict[str, float]]:
        """The resources of each live node (CPU, memory, neuron_cores, ...)."""
        return [node.get("Resources", {}) for node in self.ray.nodes() if node.get("Alive")]

    def close(self) -> None:
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
        self._started = False
