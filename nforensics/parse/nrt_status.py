"""NRT status numbers and names (neuron-runtime/api/nrt_status.rst, `nrt_status.h`)."""

from __future__ import annotations

# 8 and 12 are not in the enum.
NRT_STATUS = {
    0: "NRT_SUCCESS", 1: "NRT_FAILURE", 2: "NRT_INVALID", 3: "NRT_INVALID_HANDLE", 4: "NRT_RESOURCE",
    5: "NRT_TIMEOUT", 6: "NRT_HW_ERROR", 7: "NRT_QUEUE_FULL", 9: "NRT_LOAD_NOT_ENOUGH_NC",
    10: "NRT_UNSUPPORTED_NEFF_VERSION", 11: "NRT_FAIL_HOST_MEM_ALLOC", 13: "NRT_UNINITIALIZED",
    14: "NRT_CLOSED", 15: "NRT_QUEUE_EMPTY", 101: "NRT_EXEC_UNIT_UNRECOVERABLE",
    1002: "NRT_EXEC_BAD_INPUT", 1003: "NRT_EXEC_COMPLETED_WITH_NUM_ERR", 1004: "NRT_EXEC_COMPLETED_WITH_ERR",
    1005: "NRT_EXEC_NC_BUSY", 1006: "NRT_EXEC_OOB", 1100: "NRT_COLL_PENDING",
    1200: "NRT_EXEC_HW_ERR_COLLECTIVES", 1201: "NRT_EXEC_HW_ERR_HBM_UE", 1202: "NRT_EXEC_HW_ERR_NC_UE",
    1203: "NRT_EXEC_HW_ERR_DMA_ABORT", 1204: "NRT_EXEC_SW_NQ_OVERFLOW", 1205: "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE",
    1206: "NRT_NETWORK_PROXY_FAILURE",
}
_BY_NAME = {name: number for number, name in NRT_STATUS.items()}

# The inf1 daemon (neuron-rtd) printed its own names, `NRTD response code 'NERR_RESOURCE' (4)`. Its numbers are
# NRT's through NERR_HW_ERROR (6), and its NERR_RESOURCE_NC is 9 as NRT_LOAD_NOT_ENOUGH_NC is ("'NERR_RESOURCE_NC'
# (9) There were insufficent NCs", aws-neuron-sdk#493); what it numbered 7 and 8 no public log shows. So a legacy
# name is read by its NRT namesake (same suffix), else by this table, and by its number only where the numberings
# are known to agree (legacy_number_name).
LEGACY_NAMES = {"NERR_FAIL": "NRT_FAILURE", "NERR_RESOURCE_NC": "NRT_LOAD_NOT_ENOUGH_NC"}
SHARED_NUMBERS = frozenset({0, 1, 2, 3, 4, 5, 6, 9})
FIRST_EXECUTION_STATUS = 1000


def status_name(number: int | None) -> str | None:
    return NRT_STATUS.get(number) if number is not None else None


def status_number(name: str | None) -> int | None:
    return _BY_NAME.get(name) if name else None


def legacy_number_name(number: int) -> str | None:
    """The NRT status a pre-2.x daemon's number stands for, where the two numberings agree: the general
    statuses of SHARED_NUMBERS, and the execution statuses from FIRST_EXECUTION_STATUS (the daemon's
    `infer_wait` reported a failed execution as 1004, aws-neuron-sdk#429)."""
    return NRT_STATUS.get(number) if number in SHARED_NUMBERS or number >= FIRST_EXECUTION_STATUS else None


def legacy_status(name: str, number: int | None) -> str:
    """The NRT status a pre-2.x daemon name (`NERR_RESOURCE`) stands for, else the name as printed."""
    modern = LEGACY_NAMES.get(name, "NRT_" + name.removeprefix("NERR_"))
    if modern in _BY_NAME:
        return modern
    return (legacy_number_name(number) if number is not None else None) or name
