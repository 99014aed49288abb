#!/usr/bin/env python3
"""TEST DOUBLE: a stand-in for `neuronx-cc compile MODULE --framework XLA --target trn1 ...` on an HLO module. It is
not the real compiler, and what it rejects is chosen for the HLO reducer's tests, not taken from neuronx-cc.

It reads the module with nforensics' own reader (nforensics/artifacts/hlo.py: a .pb, .pb.gz or HLO text) and:
  - prints the neuronx-cc shape of NCC_ITEN404 (an internal tensorizer error) and exits 1 when the entry
    computation holds a convolution with a 7x7 window whose value a transpose takes as an operand (the seed 004
    graph: a 7x7 convolution and its transposed twin), on --target trn1 only;
  - with `--min-features N` as well, only when that convolution computes at least N output features (a failure
    that depends on a size: the reducer's shape shrinking must stop at N, not go below it);
  - with `--fail-on kernel-twice` instead: prints NCC_IXLV002 (seed 000's barrier error) when one kernel of a
    custom-call is launched two or more times in the module (nforensics' own kernel_calls reading);
  - prints a parse error (not a catalogue code: the oracle calls it a different failure) and exits 1 when the
    module breaks an invariant XLA checks when it loads one: an operand, root or called computation that is not
    there, entry parameters not numbered 0..n-1, a program shape that does not match;
  - otherwise prints a passing compile and exits 0.
Every run first says on stderr that it is a test double. --log FILE appends one line per run, so tests can
count compiles.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # the checkout's nforensics, whichever interpreter runs this script

BANNER = "hlo_compiler: TEST DOUBLE standing in for neuronx-cc on an HLO module (tests/fakes); not the real compiler"
STAMP = "2026-03-02T10:15:42Z"


def say(*lines: str) -> None:
    for line in lines:
        print(line, file=sys.stderr)


def invalid(path: Path) -> str | None:
    """Why XLA would refuse the module, or None."""
    from nforensics.artifacts.hlo import is_text, load_bytes
    from nforensics.artifacts.hlo_proto import load_message
    from nforensics.artifacts.hlo_write import check_module

    data = load_bytes(path)
    if is_text(data):
        return None  # text is checked by the grammar when it is read
    problems = check_module(load_message(data, str(path)))
    return problems[0] if problems else None


def conv7x7_into_transpose(path: Path, min_features: int = 0) -> str | None:
    """The name of a 7x7 convolution of the entry (with at least `min_features` output features) that a transpose
    uses, or None."""
    from nforensics.artifacts.hlo import read_module

    module = read_module(path)
    entry = next(c for c in module.computations if c.is_entry)
    convolutions = {i.name for i in entry.instructions
                    if i.opcode == "convolution" and [w.size for w in i.window or []] == [7, 7]
                    and i.conv_dims is not None and i.shape.dims[i.conv_dims.output_feature] >= min_features}
    for instruction in entry.instructions:
        if instruction.opcode == "transpose" and convolutions & set(instruction.operands):
            return next(iter(convolutions & set(instruction.operands)))
    return None


def kernel_twice(path: Path) -> str | None:
    """A kernel the module launches two or more times, or None."""
    from nforensics.artifacts.hlo import read_hlo

    for call in read_hlo(path).custom_calls:
        for kernel, calls in call.kernels.items():
            if calls >= 2:
                return kernel
    return None


def main(argv: list[str]) -> int:
    say(BANNER)
    if "--log" in argv:
        i = argv.index("--log")
        with open(argv[i + 1], "a") as f:
            f.write(" ".join(argv[:i] + argv[i + 2:]) + "\n")
        argv = argv[:i] + argv[i + 2:]
    fail_on = "conv7x7-transpose"
    if "--fail-on" in argv:
        i = argv.index("--fail-on")
        fail_on, argv = argv[i + 1], argv[:i] + argv[i + 2:]
    min_features = 0
    if "--min-features" in argv:
        i = argv.index("--min-features")
        min_features, argv = int(argv[i + 1]), argv[:i] + argv[i + 2:]
    if argv[:1] == ["compile"]:
        argv = argv[1:]
    module = Path(argv[0])
    target = next((a.split("=", 1)[1] for a in argv if a.startswith("--target=")), None)
    if "--target" in argv:
        target = argv[argv.index("--target") + 1]
    try:
        problem = invalid(module)
    except Exception as exc:  # noqa: BLE001 - a test double reports whatever stopped it
        problem = f"{type(exc).__name__}: {exc}"
    if problem:
        say(f"{STAMP} ERROR 4242 [HLOParser]: Failed to parse the HLO module {module}: {problem}")
        return 1
    kernel = kernel_twice(module) if fail_on == "kernel-twice" else None
    if kernel:
        say(f"{STAMP} ERROR 4242 [neuronxcc.driver.CommandDriver]: [INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers "
            f"to have name {kernel}-0_476_sr_cb_begin, but core barrier 6 in subgraph 0",
            f"on core 1 has name {kernel}-0_176_sr_cb_begin",
            f"{STAMP} INFO 4242 [root]: Subcommand returned with exitcode=70")
        return 1
    conv = conv7x7_into_transpose(module, min_features) if fail_on == "conv7x7-transpose" else None
    if conv and target == "trn1":
        say(f"{STAMP} ERROR 4242 [sg0000/Tensorizer/BirCodeGenLoop]: [INTERNAL_ERROR] [NCC_ITEN404] Internal tensorizer "
            "error: BirCodeGenLoop:",
            "tensorcopy src start_partition(0) or dst start_partition(i_3) is not multiple of partitions_per_bank (32).",
            f"%'{conv}_transpose_nhwc_a0_img_local_prefetch'",
            f"{STAMP} INFO 4242 [root]: Subcommand returned with exitcode=70")
        return 1
    print(f"{STAMP} INFO 4242 [root]: Pipeline: Frontend WalrusDriver BIRLinker Kelper SaveTemps")
    print("Compiler status PASS")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
