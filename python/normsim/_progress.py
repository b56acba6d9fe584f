"""A progress bar on stderr (a terminal or a notebook), redrawn at most ten times a second."""
import sys
import time


def _duration(seconds):
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def wanted(progress):
    """progress=None: draw when stderr is a terminal or we run in a notebook kernel."""
    if progress is not None:
        return bool(progress)
    return sys.stderr.isatty() or "ipykernel" in sys.modules


class Bar:
    """Call with (done, total) in any unit (normsim passes cost: samples x depth x width^2 x tokens)."""

    def __init__(self, label, enabled, width=30):
        self.label, self.enabled, self.width = label, enabled, width
        self.start = time.monotonic()
        self.last = 0.0
        self.painted = False

    def __call__(self, done, total):
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        frac = done / total if total > 0 else 1.0
        filled = int(round(frac * self.width))
        elapsed = now - self.start
        eta = elapsed * (1 - frac) / frac if frac > 0 else 0.0
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {100 * frac:3.0f}% "
                         f"{_duration(elapsed)} elapsed, ETA {_duration(eta)} ")
        sys.stderr.flush()
        self.painted = True

    def close(self):
        if self.painted:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.painted = False
