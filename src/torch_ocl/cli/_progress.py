"""A small progress display on stderr: a redrawn bar on a terminal, one line per step otherwise
(so that logs and CI output stay readable). Nothing is printed when ``enabled`` is False."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import Callable, Optional


class Progress:
    def __init__(self, total: int, label: str = "", *, enabled: bool = True, stream=None):
        self.total = max(int(total), 1)
        self.label = label
        self.done = 0
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self._note = ""
        self._lock = threading.Lock()
        self._ticker: Optional[threading.Thread] = None
        self._stop = threading.Event()

    def _line(self) -> str:
        width = min(shutil.get_terminal_size((80, 20)).columns, 100)
        elapsed = time.perf_counter() - self.t0
        head = f"{self.label} {self.done}/{self.total} "
        tail = f" {elapsed:6.1f}s {self._note}"
        bar_w = max(10, min(30, width - len(head) - len(tail) - 3))
        filled = int(bar_w * self.done / self.total)
        line = f"{head}[{'#' * filled}{'.' * (bar_w - filled)}]{tail}"
        return line[: width - 1]

    def _draw(self, final: bool = False) -> None:
        if not self.enabled:
            return
        with self._lock:
            if self.tty:
                end = "\n" if final else ""
                self.stream.write("\r\x1b[K" + self._line() + end)
            else:
                self.stream.write(self._line() + "\n")
            self.stream.flush()

    def step(self, note: str = "") -> None:
        """Marks the start of the next unit of work (``note`` names it)."""
        self._note = note
        if self.tty or note:
            self._draw()

    def advance(self, n: int = 1, note: Optional[str] = None) -> None:
        self.done = min(self.total, self.done + n)
        if note is not None:
            self._note = note
        if self.tty:
            self._draw()

    def tick_while(self, status: Callable[[], str], every: float = 0.25) -> None:
        """Redraws the bar with ``status()`` appended every ``every`` seconds (terminal only)."""
        if not (self.enabled and self.tty):
            return
        base = self._note

        def loop():
            while not self._stop.wait(every):
                self._note = f"{base} {status()}"
                self._draw()

        self._stop.clear()
        self._ticker = threading.Thread(target=loop, daemon=True)
        self._ticker.start()

    def stop_ticking(self) -> None:
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._ticker = None

    def close(self, note: str = "") -> None:
        self.stop_ticking()
        self.done = self.total
        self._note = note
        self._draw(final=True)


def status(msg: str, *, enabled: bool = True) -> None:
    """One line of progress on stderr."""
    if enabled:
        print(msg, file=sys.stderr, flush=True)


def fit(text: str, width: int = 100) -> str:
    """Wraps every line longer than ``width`` (continuations indented), so output fits a
    terminal."""
    import textwrap

    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        out += textwrap.wrap(line, width, subsequent_indent=indent) or [""]
    return "\n".join(out)
