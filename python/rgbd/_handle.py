"""The one lifetime of every object that owns a handle of the library (a capture, a
rectifier, a scene): closing, the context manager, release on garbage collection, the
lock that keeps the handle alive during calls, and the refusal to pickle."""

from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from typing import Any, Iterator

from . import _lib

__all__ = ["Handle"]


def _destroy(function_name: str, handle: Any) -> None:
    """Releases a handle with the library's ``rgbd_*_destroy`` (a finalizer; runs at most once)."""
    getattr(_lib.lib(), function_name)(handle)


class Handle:
    """Owns one handle of the library, released by :meth:`close`, by leaving a ``with``
    block, or when the object is garbage-collected.

    Calls use the handle inside :meth:`_use`, which raises ``ValueError`` once the object
    is closed and keeps the handle alive until the block ends: :meth:`close` waits for the
    calls running in other threads. A subclass names its destroy function, says what a
    closed object's error and a pickling attempt's error say, and sets ``_serialized`` when
    its calls must not overlap (a handle with a position, such as a scene's).
    """

    #: The library's function that releases the handle (``rgbd_*_destroy``).
    _destroy_function: str
    #: True: calls on the handle run one at a time (serialized by a lock).
    _serialized = False
    #: The ``TypeError``'s message when the object is pickled.
    _pickle_message: str

    def __init__(self, handle: Any) -> None:
        """Takes ownership of ``handle`` (released with :attr:`_destroy_function`)."""
        if not handle:
            raise ValueError("handle is NULL")
        self._handle = handle
        self._finalizer = weakref.finalize(self, _destroy, self._destroy_function, handle)
        self._state = threading.Condition(threading.Lock())
        self._busy = 0
        self._closed = False
        self._calls = threading.Lock() if self._serialized else None

    def _closed_message(self) -> str:
        """The ``ValueError``'s message when a closed object is used."""
        raise NotImplementedError

    @contextmanager
    def _use(self) -> Iterator[Any]:
        """The handle, kept alive (close() waits) for the duration of the block."""
        with self._state:
            if self._closed:
                raise ValueError(self._closed_message())
            self._busy += 1
        try:
            if self._calls is None:
                yield self._handle
            else:
                with self._calls:
                    yield self._handle
        finally:
            with self._state:
                self._busy -= 1
                if self._busy == 0:
                    self._state.notify_all()

    def close(self) -> None:
        """Releases the library's handle (its ``rgbd_*_destroy``). Idempotent.

        Waits for calls on this object running in other threads to finish first.
        """
        with self._state:
            if self._closed:
                return
            self._closed = True
            while self._busy:
                self._state.wait()
        self._finalizer()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._closed

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __reduce__(self) -> Any:
        raise TypeError(self._pickle_message)
