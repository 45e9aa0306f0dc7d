"""Valgrind client requests from Python, without a C compiler.

A program running under valgrind talks to it through a "client request": a
fixed sequence of machine instructions that does nothing on a real CPU (four
rotations of a register that add up to a full turn, then an exchange of a
register with itself) and that valgrind's translator recognizes. C programs get
it from ``valgrind.h``; this module writes the same x86-64 instructions into an
executable page once and calls them through :mod:`ctypes`, so the counting mode
needs only valgrind itself (the Debian package ``valgrind``), no headers and no
compiler. Outside valgrind every request returns its default and changes
nothing.

Only the callgrind requests the counting mode uses are here: zero the counters,
and dump them to a file labelled with a row's name (``CALLGRIND_ZERO_STATS``
and ``CALLGRIND_DUMP_STATS_AT`` of ``callgrind.h``), plus starting the
instrumentation that ``--instr-atstart=no`` leaves off while the process
imports and sets up.
"""

from __future__ import annotations

import ctypes
import mmap
import platform
from collections.abc import Callable

# mov rax, rdi; mov rdx, rsi            (rax: the request block; rdx: the default)
# rol rdi, 3; rol rdi, 13; rol rdi, 61; rol rdi, 51; xchg rbx, rbx   (valgrind.h's
# amd64 __SPECIAL_INSTRUCTION_PREAMBLE and VALGRIND_DO_CLIENT_REQUEST_EXPR)
# mov rax, rdx; ret                     (the answer, or the default outside valgrind)
_AMD64 = bytes.fromhex("4889f84889f248c1c70348c1c70d48c1c73d48c1c7334887db4889d0c3")

RUNNING_ON_VALGRIND = 0x1001
"""Core request: how many valgrinds deep this process runs (0 outside valgrind)."""

_CALLGRIND = (ord("C") << 24) | (ord("T") << 16)
ZERO_STATS = _CALLGRIND + 1
DUMP_STATS_AT = _CALLGRIND + 3
START_INSTRUMENTATION = _CALLGRIND + 4

_Request = Callable[[ctypes.Array[ctypes.c_ulong], int], int]


class ClientRequests:
    """The one executable page and the function on it; make one per process."""

    def __init__(self) -> None:
        machine = platform.machine().lower()
        if machine not in ("x86_64", "amd64"):
            raise RuntimeError(
                f"instruction counts need an x86-64 machine (this one is {machine}): "
                "the client-request sequence is written for it"
            )
        self._page = mmap.mmap(
            -1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC
        )
        self._page.write(_AMD64)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        kind = ctypes.CFUNCTYPE(ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong), ctypes.c_ulong)
        self._call: _Request = kind(address)
        # Labels must outlive the dump that reads them: keep every one.
        self._labels: list[ctypes.Array[ctypes.c_char]] = []

    def request(self, code: int, *args: int, default: int = 0) -> int:
        block = (ctypes.c_ulong * 6)(code, *args)
        return int(self._call(block, default))

    def running_on_valgrind(self) -> bool:
        return self.request(RUNNING_ON_VALGRIND) > 0

    def start_instrumentation(self) -> None:
        self.request(START_INSTRUMENTATION)

    def zero(self) -> Callable[[], None]:
        """A function that zeroes callgrind's counters (bound once: cheap and constant)."""
        call, block = self._call, (ctypes.c_ulong * 6)(ZERO_STATS)

        def zero() -> None:
            call(block, 0)

        return zero

    def dump(self, label: str) -> Callable[[object], None]:
        """A function that dumps the counters to a file whose trigger names ``label`` (its
        argument, what the loop's start returned, is ignored)."""
        text = ctypes.create_string_buffer(label.encode())
        self._labels.append(text)
        call = self._call
        block = (ctypes.c_ulong * 6)(DUMP_STATS_AT, ctypes.addressof(text))

        def dump(_started: object = None) -> None:
            call(block, 0)

        return dump
