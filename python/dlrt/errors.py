"""dlrt.errors: the exceptions dlrt raises, named and numbered as TensorFlow's tf.errors.

Every error from the runtime (a bad shape, an unknown device, an op a device cannot run, out
of memory, a corrupt file) arrives as one of these classes with the runtime's message. Each
is also a subclass of the built-in exception a Python user would catch for it:
InvalidArgumentError and OutOfRangeError are ValueErrors, UnimplementedError is a
NotImplementedError, and every other one is a RuntimeError (through OpError).
"""

from __future__ import annotations

# TensorFlow's (and dlrt's, status.h) error codes.
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(RuntimeError):
    """The base of dlrt's errors: `message` and `error_code` as TensorFlow's OpError."""

    error_code = UNKNOWN

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(message, *args)
        self.message = message

    def __str__(self) -> str:
        return self.message


class CancelledError(OpError):
    error_code = CANCELLED


class UnknownError(OpError):
    error_code = UNKNOWN


class InvalidArgumentError(OpError, ValueError):
    error_code = INVALID_ARGUMENT


class DeadlineExceededError(OpError):
    error_code = DEADLINE_EXCEEDED


class NotFoundError(OpError):
    error_code = NOT_FOUND


class AlreadyExistsError(OpError):
    error_code = ALREADY_EXISTS


class PermissionDeniedError(OpError):
    error_code = PERMISSION_DENIED


class ResourceExhaustedError(OpError):
    error_code = RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError):
    error_code = FAILED_PRECONDITION


class AbortedError(OpError):
    error_code = ABORTED


class OutOfRangeError(OpError, ValueError):
    error_code = OUT_OF_RANGE


class UnimplementedError(OpError, NotImplementedError):
    error_code = UNIMPLEMENTED


class InternalError(OpError):
    error_code = INTERNAL


class UnavailableError(OpError):
    error_code = UNAVAILABLE


class DataLossError(OpError):
    error_code = DATA_LOSS


class UnauthenticatedError(OpError):
    error_code = UNAUTHENTICATED


_BY_CODE = {
    cls.error_code: cls
    for cls in (CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
                NotFoundError, AlreadyExistsError, PermissionDeniedError,
                ResourceExhaustedError, FailedPreconditionError, AbortedError,
                OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
                DataLossError, UnauthenticatedError)
}


def exception_type(error_code: int) -> type[OpError]:
    """The class for a dlrt/TensorFlow error code (UnknownError for a code it does not know)."""
    return _BY_CODE.get(int(error_code), UnknownError)
