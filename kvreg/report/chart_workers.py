"""The report's charts drawn in worker processes while the report's remaining queries run.

:func:`start_workers` chooses :data:`WORKERS` Python processes that import matplotlib (its import is ~0.9 s CPU, and
the charts ~2 s of Python for the Q4 2026 report: threads would not draw in parallel, DuckDB's queries only release
the GIL), started at once, or at the first chart the report's :mod:`kvreg.report.chart_cache` does not hold;
:func:`submit` returns a kept chart, or sends its rows to a worker and returns a future of its SVG string.
The SVG is the bytes :mod:`kvreg.report.charts` draws in the report process (the same functions; the test draws
both).  Without workers (one core, no process could start, a worker exited) the chart is drawn in this process.
"""

from __future__ import annotations

_CHARTS = None  # the kvreg.report.charts module (in a worker: charts.py loaded by path, see the end of this file)


def _charts():
    global _CHARTS
    if _CHARTS is None:
        from kvreg.report import charts

        _CHARTS = charts
    return _CHARTS


KINDS = ("capacity_vs_context", "naive_vs_engine", "roofline", "cost_per_million")
# One worker: each pays Python's start and matplotlib's import (~0.8 s CPU), and on the 2-core machine the speed
# targets are set on (benchmarks/README.md) the report process plans its SQL on one core (DuckDB's binder and
# optimizer are single-threaded; that is most of a report query's time), so one other core is free: a second worker
# cost 0.8 s CPU and gained no wall time under load (Q4 2026 HTML, benchmarks/README.md "reporthtml"; idle not
# measured).  The
# charts are submitted before the last ~2 s of queries and collected after them (context.py _collect_charts).
WORKERS = 1
_WORKERS: list | None = None  # the started _Worker objects, kept for the process's life (None: none started yet)
_USE_WORKERS: bool | None = None  # start_workers' verdict: draw in workers (None: start_workers never called)
_CACHE = None  # the kvreg.report.chart_cache.ChartCache start_workers was given, or None


def _draw(kind: str, fields: tuple, rows: list, args: tuple) -> str | None:
    """Draw chart ``kind`` (one of :data:`KINDS`) from plain row tuples named by ``fields``."""
    import collections

    Row = collections.namedtuple("Row", fields)  # noqa: PYI024  (the charts read rows by attribute)
    return getattr(_charts(), kind)([Row(*r) for r in rows], *args)


def serve() -> None:
    """A chart worker's loop (``python chart_workers.py CHARTS_PY``, the end of this file): import matplotlib, then
    read pickled ``(job id, kind, fields, rows, args)`` from stdin and write
    ``(job id, ok, SVG or error)`` to stdout until stdin closes."""
    import pickle
    import sys
    import traceback

    _charts()._plt()
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            job, kind, fields, rows, args = pickle.load(inp)
        except EOFError:
            return
        try:
            reply = (job, True, _draw(kind, fields, rows, args))
        except Exception:  # noqa: BLE001  (sent back: the report process raises it)
            reply = (job, False, traceback.format_exc())
        pickle.dump(reply, out)
        out.flush()


class _Worker:
    """One chart worker process and the thread that reads its replies into futures.

    A plain subprocess running this file with charts.py's path, not a multiprocessing pool: a spawned pool
    re-imports the caller's ``__main__``, which would run an unguarded script calling ``kvreg.report`` again in
    every worker, and a forked one would copy the DuckDB process's threads.  charts.py imports nothing of kvreg,
    so the worker loads it by path without the kvreg package (whose API and CLI modules cost ~0.3 s CPU to import).  Replies are read by a thread so that neither pipe can
    fill while the other side waits (an SVG is ~25 kB).
    """

    def __init__(self):
        import os
        import subprocess
        import sys
        import threading

        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # as multiprocessing's spawn
        # -P: kvreg/report is not put on sys.path (its module names would shadow others)
        self.proc = subprocess.Popen([sys.executable, "-P", __file__, _charts().__file__],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.pending: dict = {}
        self.lock = threading.Lock()
        self.next = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        import pickle

        try:
            while True:
                job, ok, value = pickle.load(self.proc.stdout)
                with self.lock:
                    fut = self.pending.pop(job)
                if ok:
                    fut.set_result(value)
                else:
                    fut.set_exception(RuntimeError(f"chart worker failed:\n{value}"))
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
        with self.lock:   # the worker is gone: what it still owed is drawn in the report process (_Pending)
            left, self.pending = list(self.pending.values()), {}
        for fut in left:
            fut.set_exception(EOFError("chart worker exited"))

    def submit(self, kind: str, fields: tuple, rows: list, args: tuple):
        import concurrent.futures
        import pickle

        fut = concurrent.futures.Future()
        with self.lock:
            job, self.next = self.next, self.next + 1
            self.pending[job] = fut
        pickle.dump((job, kind, fields, rows, args), self.proc.stdin)
        self.proc.stdin.flush()
        return fut

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001  (at exit: nothing to report to)
            self.proc.kill()


def start_workers(cache=None) -> bool:
    """Draw the charts in :data:`WORKERS` worker processes, each importing matplotlib (~0.8 s CPU) so that the charts
    are drawn beside the report's queries (DuckDB releases the GIL while it runs, but matplotlib is Python: threads
    would not draw in parallel).  Workers are kept for the process's life (a test session renders many reports) and
    stopped at exit.

    Args:
        cache: a :class:`kvreg.report.chart_cache.ChartCache`: charts kept from an earlier run are read from it and
            the others written to it (pruned here).  With a cache that holds charts the workers start at the first
            chart it does not hold, so a report whose charts are all kept starts no process and imports no
            matplotlib; without a cache, or with an empty one (a first run: every chart will be drawn), they start
            now, their import overlapping the report's first queries.

    Returns:
        False — charts then drawn in this process — on a single-core machine; True otherwise (should no process
        start, the charts are drawn in this process too).
    """
    global _USE_WORKERS, _CACHE
    import os

    _CACHE = cache
    if cache is not None:
        cache.prune()
    if _USE_WORKERS is None:
        _USE_WORKERS = (os.cpu_count() or 1) >= 2
    if cache is None or not cache.holds_any():
        _live_workers()
    return _USE_WORKERS


def _live_workers() -> list:
    """The running workers, started on first use when :func:`start_workers` chose workers."""
    global _WORKERS
    if _WORKERS is None:
        if not _USE_WORKERS:
            return []
        import atexit

        _WORKERS = []
        try:
            for _ in range(WORKERS):
                _WORKERS.append(_Worker())
        except OSError:
            pass
        for w in _WORKERS:
            atexit.register(w.close)
    return [w for w in _WORKERS if w.proc.poll() is None]


class _Done:
    """A chart drawn in this process or read from the cache, with the interface of a future."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class _Pending:
    """A chart being drawn in a worker; drawn in this process instead should the worker have exited.  The SVG is
    written to ``cache`` under ``key`` when it is collected (both None: not kept)."""

    def __init__(self, future, kind: str, rows: list, args: tuple, cache=None, key: str | None = None):
        self.future, self.kind, self.rows, self.args = future, kind, rows, args
        self.cache, self.key = cache, key

    def result(self):
        try:
            value = self.future.result()
        except EOFError:
            value = getattr(_charts(), self.kind)(self.rows, *self.args)
        if self.cache is not None:
            self.cache.put(self.key, value)
            self.cache = None
        return value


_turn = 0


def submit(kind: str, rows: list, *args):
    """Draw chart ``kind`` (:data:`KINDS`) with ``rows`` (query namedtuples) and ``args``; returns an object whose
    ``result()`` is the SVG string or None.  Read from the cache :func:`start_workers` was given when it holds the
    chart, else drawn in the worker processes, in turn, once :func:`start_workers` chose them (the rows go as plain
    tuples with their field names: the query's row classes are made per query and do not pickle), else drawn now;
    a chart drawn is written to the cache.  The SVG is the same bytes either way (same code, same rcParams context; each
    kind's reused figure ends in a fresh one's state, :data:`kvreg.report.charts._REUSED`)."""
    global _turn
    if kind not in KINDS:
        raise ValueError(f"unknown chart kind {kind!r}")
    fields = rows[0]._fields if rows else ()
    cache, key = _CACHE, None
    if cache is not None:
        key = cache.key(kind, fields, rows, args)
        hit, svg = cache.get(key)
        if hit:
            return _Done(svg)
    live = _live_workers()
    if live:
        w = live[_turn % len(live)]
        _turn += 1
        try:
            return _Pending(w.submit(kind, fields, [tuple(r) for r in rows], args), kind, rows, args, cache, key)
        except OSError:   # the worker's pipe is closed: draw here
            pass
    svg = getattr(_charts(), kind)(rows, *args)
    if cache is not None:
        cache.put(key, svg)
    return _Done(svg)


if __name__ == "__main__":   # a chart worker (_Worker): python chart_workers.py CHARTS_PY
    import importlib.util
    import sys

    _spec = importlib.util.spec_from_file_location("kvreg_report_charts", sys.argv[1])
    _CHARTS = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_CHARTS)
    serve()
