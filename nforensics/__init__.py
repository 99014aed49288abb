"""nforensics: explain, confirm and report AWS Neuron toolchain failures."""

__version__ = "0.1.0"
