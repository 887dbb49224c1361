"""The exception raised for every failure the library reports."""

from __future__ import annotations

import enum
from typing import Union

from . import _lib

__all__ = ["Status", "RGBDError", "check"]


class Status(enum.IntEnum):
    """Status codes of rgbd.h (``RGBD_OK``, ``RGBD_ERROR_*``)."""

    OK = _lib.RGBD_OK
    IO = _lib.RGBD_ERROR_IO  #: a file could not be read or written
    INVALID_JSON = _lib.RGBD_ERROR_INVALID_JSON  #: the JSON is not valid JSON (empty, cut short, syntax)
    INVALID_CAPTURE = _lib.RGBD_ERROR_INVALID_CAPTURE  #: valid JSON; a key is missing or holds the wrong value
    INVALID_IMAGE = _lib.RGBD_ERROR_INVALID_IMAGE  #: an image cannot be decoded or has the wrong size
    INVALID_ARGUMENT = _lib.RGBD_ERROR_INVALID_ARGUMENT  #: NULL pointer, buffer too small, bad option
    INVALID_SCENE = _lib.RGBD_ERROR_INVALID_SCENE  #: a scan's table, frame, pose or archive is malformed


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


def check(status: int) -> None:
    """Raises :class:`RGBDError` with ``rgbd_last_error()`` if ``status`` is not ``RGBD_OK``.

    Must be called on the thread that made the failing call, before any other rgbd call
    (the message is thread-local and only valid until the next failure).
    """
    if status == _lib.RGBD_OK:
        return
    raw = _lib.lib().rgbd_last_error()
    message = raw.decode("utf-8", errors="replace") if raw else ""
    if not message:
        message = f"rgbd call failed with status {status} and no message"
    raise RGBDError(message, status)
