"""The progress bar of normsim.run, normsim.check and normsim.torch.measure on stderr: tqdm's when tqdm is
installed (tqdm.auto's widget in a notebook that has ipywidgets), else a text bar of normsim's own."""
import importlib.util
import sys
import time


def wanted(progress):
    """progress=None: draw when stderr is a terminal or we run in a notebook kernel."""
    if progress is not None:
        return bool(progress)
    return sys.stderr.isatty() or "ipykernel" in sys.modules


def _tqdm_class():
    """tqdm's bar class, or None when tqdm is not installed. tqdm.auto only where its notebook widget can be
    drawn: without ipywidgets, tqdm.notebook raises on the first bar instead of falling back to text."""
    try:
        if "ipykernel" in sys.modules and importlib.util.find_spec("ipywidgets") is not None:
            from tqdm.auto import tqdm
        else:
            from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class Bar:
    """Call with (done, total) in any unit (normsim passes cost: samples x depth x width^2 x tokens, or claims
    or samples done); close() when finished. Draws nothing unless enabled; the bar is made on the first call,
    when the total is known."""

    def __init__(self, label, enabled):
        self.label, self.enabled = label, enabled
        self.started = time.monotonic()  # the first call comes after the first unit: count that unit's time
        self.drawn = None

    def __call__(self, done, total):
        if not self.enabled:
            return
        if self.drawn is None:
            tqdm = _tqdm_class()
            self.drawn = _TqdmBar(tqdm, self.label, total, self.started) if tqdm is not None else \
                _TextBar(self.label, self.started)
        self.drawn.update(done, total)

    def close(self):
        if self.drawn is not None:
            self.drawn.close()
            self.drawn = None


class _TqdmBar:
    """tqdm in the units given, showing the fraction and times only (cost units mean nothing to a reader).
    smoothing=0: the rate is the average since the start, as units differ in cost."""

    def __init__(self, tqdm, label, total, started):
        self.bar = tqdm(total=total, desc=label, file=sys.stderr, mininterval=0.1, smoothing=0,
                        dynamic_ncols=True, bar_format="{l_bar}{bar}| {elapsed} elapsed, ETA {remaining}")
        self.bar.start_t -= time.monotonic() - started  # back to the Bar's start (tqdm's clock is time.time)

    def update(self, done, total):
        if total != self.bar.total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)

    def close(self):
        self.bar.close()


def _duration(seconds):
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class _TextBar:
    """The bar without tqdm: one line redrawn with \\r at most ten times a second."""

    def __init__(self, label, started, width=30):
        self.label, self.width = label, width
        self.start = started
        self.last = 0.0
        self.painted = False

    def update(self, done, total):
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
