"""Compile nforensics/artifacts/hlo_schema/xla_hlo.proto into xla_hlo.desc (a serialized FileDescriptorSet).

nforensics reads HLO protos through the protobuf package without generated `_pb2` code: at run time it
adds this descriptor to a private descriptor pool and asks protobuf for the message classes
(nforensics/artifacts/hlo_proto.py). Generated code from a new protoc pins the protobuf runtime to at least
its own version (the `_pb2` checks it on import), and Neuron virtual environments pin protobuf themselves;
a descriptor works with every protobuf from 3.20 on. Needs protoc, which grpcio-tools carries:

    .venv/bin/pip install grpcio-tools
    .venv/bin/python tools/build_hlo_descriptor.py            # rewrite xla_hlo.desc
    .venv/bin/python tools/build_hlo_descriptor.py --check    # exit 1 if xla_hlo.desc is stale

The output is byte-stable for a given .proto (no source info, no paths).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

SCHEMA = Path(__file__).resolve().parents[1] / "nforensics" / "artifacts" / "hlo_schema"
PROTO = SCHEMA / "xla_hlo.proto"
TARGET = SCHEMA / "xla_hlo.desc"


def render() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "xla_hlo.desc"
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={SCHEMA}",
                        f"--descriptor_set_out={out}", PROTO.name], check=True)
        return out.read_bytes()


def main() -> int:
    data = render()
    if "--check" in sys.argv:
        if not TARGET.exists() or TARGET.read_bytes() != data:
            print(f"{TARGET} is stale: run python tools/build_hlo_descriptor.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_bytes(data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
