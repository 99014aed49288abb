"""`nforensics env`: the offline probe of this machine, as text (collect_env style) or JSON, redacted."""

from __future__ import annotations

from nforensics.records import MachineProbe
from nforensics.redact import Redactor
from nforensics.render.report import APT_COMMAND, PIP_COMMAND


def render_probe(probe: MachineProbe, format: str, redactor: Redactor) -> str:
    """`nforensics env` output: text (collect_env style) or JSON, redacted."""
    from nforensics.envprobe import is_placeholder_wheel

    if format == "json":
        return redactor.redact(probe.model_dump_json(indent=2)) + "\n"
    missing = probe.not_collected

    def value(name: str, text: str | None) -> str:
        return text if text else missing.get(name, "none")

    def listing(name: str, packages: dict[str, str], separator: str = " ") -> str:
        if name in missing:
            return "  " + missing[name]
        rows = [
            f"  {n}{separator}{v}" + ("  (PyPI placeholder, not the real package)" if is_placeholder_wheel(n, v) else "")
            for n, v in packages.items()
        ]
        return "\n".join(rows) or "  none found"

    out = [
        "nforensics env: offline probe of this machine",
        "",
        f"OS: {value('os', probe.os)}",
        f"Python: {value('python', probe.python)}",
        f"Instance type: {value('instance_type', probe.instance_type)}",
        "Neuron software: "
        + ("found" if probe.neuron_software else "none found (no neuronx-cc, neuron-ls, or Neuron apt/pip package)"),
        f"neuronx-cc --version: {value('compiler_version', probe.compiler_version)}",
        f"neuron-ls: {value('neuron_ls', probe.neuron_ls)}",
        f"Neuron apt packages ({APT_COMMAND}):",
        listing("apt_packages", probe.apt_packages),
        f"pip packages ({PIP_COMMAND}; this interpreter):",
        listing("pip_packages", probe.pip_packages),
        "NEURON_*/XLA_* environment variables:",
        listing("env_vars", probe.env_vars, "=") if probe.env_vars else "  none set",
    ]
    return redactor.redact("\n".join(out)) + "\n"
