"""The exception raised for every failure the library reports."""

from __future__ import annotations

import enum
from typing import Optional, Union

__all__ = ["Status", "RGBDError", "error_for"]

# The status codes of rgbd.h (``_lib`` re-exports them with the rest of the header's
# constants; they are defined here, beside the exception that carries them, so that
# ``_lib`` can raise it without this module importing ``_lib``).
RGBD_OK = 0
RGBD_ERROR_IO = 1
RGBD_ERROR_INVALID_JSON = 2
RGBD_ERROR_INVALID_CAPTURE = 3
RGBD_ERROR_INVALID_IMAGE = 4
RGBD_ERROR_INVALID_ARGUMENT = 5
RGBD_ERROR_INVALID_SCENE = 6


class Status(enum.IntEnum):
    """Status codes of rgbd.h (``RGBD_OK``, ``RGBD_ERROR_*``)."""

    OK = RGBD_OK
    IO = RGBD_ERROR_IO  #: a file could not be read or written
    INVALID_JSON = RGBD_ERROR_INVALID_JSON  #: the JSON is not valid JSON (empty, cut short, syntax)
    INVALID_CAPTURE = RGBD_ERROR_INVALID_CAPTURE  #: valid JSON; a key is missing or holds the wrong value
    INVALID_IMAGE = RGBD_ERROR_INVALID_IMAGE  #: an image cannot be decoded or has the wrong size
    INVALID_ARGUMENT = RGBD_ERROR_INVALID_ARGUMENT  #: NULL pointer, buffer too small, bad option
    INVALID_SCENE = RGBD_ERROR_INVALID_SCENE  #: a scan's table, frame, pose or archive is malformed


class RGBDError(Exception):
    """A call into the rgbd library failed.

    Attributes:
        message: the library's one-line description (``rgbd_last_error()``), naming the
            file and key where it applies.
        status: the status code the call returned, a :class:`Status` (a plain int if the
            library returned a code this package does not know).
    """

    def __init__(self, message: str, status: Union[Status, int]) -> None:
        super().__init__(message, status)
        self.message = message
        try:
            self.status: Union[Status, int] = Status(status)
        except ValueError:
            self.status = status

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        name = self.status.name if isinstance(self.status, Status) else str(self.status)
        return f"RGBDError({self.message!r}, status={name})"


def error_for(status: int, raw_message: Optional[bytes]) -> RGBDError:
    """The :class:`RGBDError` of a failed call: its status and ``rgbd_last_error()``'s text
    (``raw_message``), or a message saying there was none."""
    message = raw_message.decode("utf-8", errors="replace") if raw_message else ""
    if not message:
        message = f"rgbd call failed with status {status} and no message"
    return RGBDError(message, status)
