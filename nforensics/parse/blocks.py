"""The compiler's multi-line blocks (the Internal Compiler Error banner, the BIR verifier report) and the
NRT "cut here" infodump: opened by a header line, filled field by field, closed by a border or a blank."""

from __future__ import annotations

import re

from nforensics.parse.messages import MessageReader
from nforensics.parse.shapes import BirField, BirHeader, BirInstruction, IceField, IceMark, SgError
from nforensics.records import BirVerification, IceReport, LogEvent

# The versions an NRT "cut here" block lists, and the packages they are versions of.
_INFODUMP_PACKAGES = {"NRT version": "aws-neuronx-runtime-lib", "Driver version": "aws-neuronx-dkms",
                      "Embedded FW version": "neuron-firmware", "CCOM version": "aws-neuronx-collectives"}
_STARS = re.compile(r"^\*{20,}$")
_FOOT_KEYS = ("Version information", "Diagnostic logs")  # fields that stand alone only at the banner's foot
FOOT_ITEMS = 2  # version items in a row that make a version block
FOOT_GAP = 3  # lines (blank ones) between the block's items and its logs line
_BIR_INSTRUCTION = re.compile(r"^\s*I-\d+(?:-\d+)?\s*$")


class BlockReader(MessageReader):
    """The ICE banner, the BIR verifier block and the NRT infodump, as the assembler meets their lines."""

    def _compiler_block_line(self, number: int, line: object, from_compiler: bool = False) -> bool:
        """File a line of the ICE banner or of a BIR block; False when `line` is no such line. `from_compiler`:
        the line was behind the compiler's own log prefix."""
        match line:
            case IceMark(title=title):
                if self.open_ice is None:
                    self._open_ice(number)
                elif not title:  # the closing row of stars
                    self.open_ice.end_line = number
            case IceField(key=key, value=value) if key in _FOOT_KEYS and (self.open_ice is None or key == "Diagnostic logs"):
                self._ice_foot(number, key, value)
            case IceField(key=key, value=value):
                if self.open_ice is None and from_compiler and key == "Error message":
                    # The banner's first field behind the compiler's prefix: the title rows were cut from the paste.
                    self._open_ice(number)
                if self.open_ice is not None:
                    self.ice_field = key
                    self.open_ice.end_line = number
                    self._ice_value(key, value, number)
            case BirHeader():
                self._close_blocks()
                self.open_bir = BirVerification.model_construct(line=number, end_line=number)
                self._add(self.log.bir, self.open_bir)
            case BirField(key=key, value=value):
                if self.open_bir is None and key == "Instruction" and _BIR_INSTRUCTION.match(value):
                    # The verifier's block pasted from below its header: its instruction id (I-1210-0) says whose.
                    self.open_bir = BirVerification.model_construct(line=number, end_line=number)
                    self._add(self.log.bir, self.open_bir)
                if self.open_bir is not None:
                    self.open_bir.end_line = number
                    self.open_bir.fields[key] = value
                    attribute = {"Reason": "reason", "Instruction": "instruction", "Opcode": "opcode"}.get(key)
                    if attribute:
                        setattr(self.open_bir, attribute, value)
            case BirInstruction(opcode=opcode, instruction=instruction, reason=reason):
                self._close_blocks()
                self._add(self.log.bir, BirVerification.model_construct(
                    line=number, end_line=number, reason=reason, instruction=instruction, opcode=opcode,
                    fields={"Instruction": instruction, "Opcode": opcode, "Reason": reason}))
            case SgError(message=message):
                self._add(self.log.events, LogEvent.model_construct(producer="compiler", line=number, level="ERROR",
                                                                    component="SG-ERROR", message=message))
            case _:
                return False
        return True

    def _ice_foot(self, number: int, key: str, value: str) -> None:
        """The banner's version block, one item a line, then the line that says where the compile's logs are:
        the foot of a banner whose rows above were cut from the paste. (Only an internal error prints that
        block; a user error's report ends in the logs line alone, and `neuronx-cc --version` prints no
        logs line.) Below an open banner, the logs line ends it."""
        if self.open_ice is not None:  # the logs line ends the banner's report
            self.open_ice.end_line, self.ice_field = number, None
        elif key == "Version information":
            if self.version_block and number - self.version_block[-1][0] > FOOT_GAP:
                self.version_block.clear()
            self.version_block.append((number, value))
        elif len(self.version_block) >= FOOT_ITEMS and number - self.version_block[-1][0] <= FOOT_GAP:
            self._open_ice(self.version_block[0][0])
            assert self.open_ice is not None
            self.open_ice.version_information = [item for _, item in self.version_block]
            self.open_ice.end_line = number
            self.version_block.clear()

    def _open_ice(self, number: int) -> None:
        self._close_blocks()
        self.open_ice = IceReport.model_construct(line=number, end_line=number)
        self._add(self.log.ice, self.open_ice)

    def _ice_value(self, key: str, value: str, number: int) -> None:
        ice = self.open_ice
        assert ice is not None
        if key == "Error message":
            ice.error_message = value or ice.error_message
            # (`Non-zero exit status (137) for command: .../pre_sched`: the stage that died, and how.)
            self._statuses(number, value)
        elif key == "Error class":
            ice.error_class = value
        elif key == "Error location":
            ice.error_location = value
        elif key == "Command line":
            ice.command_line = value
            if value:
                self._commands(number, value if "compile" in value else f"neuronx-cc compile {value}")
        elif key == "Internal details" and value:
            ice.internal_details.append(value)
        elif key == "Version information" and value:
            ice.version_information.append(value)

    def _continue_block(self, number: int, body: str) -> bool:
        text = body.strip()
        if self.open_ice is not None and self.ice_field:
            if text.startswith("Artifacts stored in") or _STARS.match(text):
                self.open_ice.end_line = number
                self.ice_field = None
                return True
            if self.ice_field in ("Internal details", "Version information"):
                ice = self.open_ice
                target = ice.internal_details if self.ice_field == "Internal details" else ice.version_information
                target.append(text)
                if self.ice_field == "Version information":
                    self._environment_line(number, text)
            elif self.ice_field == "Error message" and text:
                self.open_ice.error_message = f"{self.open_ice.error_message or ''} {text}".strip()
            self.open_ice.end_line = number
            return True
        if self.open_bir is not None:
            self.open_bir = None
            return False
        if self.in_cut_here:
            self._cut_here_field(number, text)
            return True
        if self.open_traceback is not None:
            # The source line under a frame; anything else ends the traceback.
            return bool(self.open_traceback.frames) and not text.startswith(("During handling", "The above"))
        return False

    def _cut_here_field(self, number: int, text: str) -> None:
        # The block's `Failure: NRT_X in api()` line is read by _statuses like any other message.
        key, _, value = text.partition(":")
        package = _INFODUMP_PACKAGES.get(key.strip())
        if package and value.strip():
            self._package(number, package, value.split()[0])
