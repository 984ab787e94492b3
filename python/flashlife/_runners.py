"""Where a sweep's points run: threads of this process (the core runs without the GIL), a
worker process per point on this machine, or tasks on a Dask cluster. A point that fails
becomes that point's error, never the sweep's; with processes, so does a point that aborts or
is killed."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor
from concurrent.futures import wait as _wait_futures
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as _wait_ready
from typing import Any, Protocol

from . import _core
from ._util import canonical
from .api import run


class Point(Protocol):
    """What the runners need of a sweep point."""

    key: str
    params: dict[str, Any]
    spec: dict[str, Any]


def _run_point(spec: Mapping[str, Any], stop: threading.Event | None = None) -> dict[str, Any]:
    """Run one point (in a worker process or thread). Errors come back as text, never as
    exceptions. With `stop`, the run stops within about 100 ms of it being set, preconditioning
    included, raising KeyboardInterrupt (a BaseException, so never taken for the point's error)."""
    try:
        r = run(
            spec["config"],
            spec["workload"],
            until=spec["until"],
            seed=spec["seed"],
            overrides=spec["overrides"],
            stop=stop,
        )
    except _core.FlashlifeError as e:
        return {"error": str(e)}
    except Exception as e:  # anything else (a MemoryError, a bug) is still this point's error
        return {"error": f"{type(e).__name__}: {e}"}
    return {"summary": r.summary, "timeseries_csv": r.timeseries.to_csv(index=False)}


def _cores() -> int:
    """The cores this process may use (the Slurm or taskset allocation, not the whole machine)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:
        return os.cpu_count() or 1


def _mp_context() -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        # The fork server imports flashlife (and pandas) once; workers fork from it ready.
        ctx.set_forkserver_preload(["flashlife._runners"])
        return ctx
    return multiprocessing.get_context("spawn")


#: Test hook: a point whose parameters, as canonical JSON (`{"gc.victim":"fifo","seed":1,
#: "workload":"base"}`), contain this variable's value calls os.abort() in its worker instead
#: of running, so that tests can check how a dying worker is reported. It is read in the
#: parent when the worker starts (forkserver children do not see later changes to the
#: environment); it is not part of the point's key. The process backend only: in a thread,
#: abort() would end the interpreter, which is what that backend documents. Never set it
#: outside tests.
ABORT_HOOK = "FLASHLIFE_TEST_ABORT_POINT"


def _worker(conn: Connection, spec: Mapping[str, Any], abort: bool) -> None:
    """A point's worker process: run the point and send the outcome through `conn`."""
    # Ctrl-C reaches the whole process group; the parent ends its workers itself (SIGTERM),
    # so a worker need not die of it with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if abort:
        os.abort()  # the ABORT_HOOK test hook
    outcome = _run_point(spec)
    conn.send(outcome)
    conn.close()


def _death(exitcode: int | None) -> str:
    """Why a worker ended without sending its result."""
    if exitcode is None:
        return "worker did not end after closing its result pipe"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        text = f"worker died with signal {name} (exit {exitcode})"
        if -exitcode == signal.SIGKILL:
            text += "; killed from outside, e.g. by the kernel's out-of-memory killer"
        return text
    return f"worker exited with exit code {exitcode} without a result"


def _collect(reader: Connection, proc: Any) -> dict[str, Any]:
    """The outcome of a worker whose pipe or sentinel is ready; the worker is joined."""
    outcome: dict[str, Any] | None
    try:
        # Read before joining: a large result fills the pipe, and the worker waits until it is
        # read before it can exit.
        outcome = reader.recv()
    except (EOFError, OSError):
        outcome = None  # the worker died before (or while) sending
    except Exception as e:  # a result that does not unpickle
        outcome = {"error": f"the worker's result could not be read: {type(e).__name__}: {e}"}
    finally:
        reader.close()
    proc.join(timeout=30)
    if proc.exitcode is None:
        # Sent its result but hangs on the way out: the result stands.
        proc.kill()
        proc.join()
    if outcome is None:
        outcome = {"error": _death(proc.exitcode)}
    proc.close()
    return outcome


def _stop(running: Mapping[Connection, tuple[Any, Point]]) -> None:
    """End the workers still running (Ctrl-C, SIGTERM, or an error in the parent)."""
    for proc, _ in running.values():
        proc.terminate()
    for reader, (proc, _) in running.items():
        proc.join(timeout=5)
        if proc.exitcode is None:
            proc.kill()
            proc.join()
        reader.close()


def run_local(
    pending: list[Point], max_workers: int | None, on_done: Callable[[Point, dict[str, Any]], None]
) -> None:
    """Run each point in a worker process of its own, at most `max_workers` at once.

    One process per point (also with one worker), so that a point that aborts, segfaults or
    is killed is reported as that point's error and neither the sweep nor the interpreter
    goes down with it.
    """
    workers = max_workers or _cores()
    workers = max(1, min(workers, len(pending)))
    ctx = _mp_context()
    hook = os.environ.get(ABORT_HOOK)
    queue = list(reversed(pending))  # popped from the end: grid order
    running: dict[Connection, tuple[Any, Point]] = {}
    try:
        while queue or running:
            while queue and len(running) < workers:
                p = queue.pop()
                abort = bool(hook) and hook in canonical(p.params)
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(
                    target=_worker, args=(writer, p.spec, abort), name=f"flashlife-sweep-{p.key}", daemon=True
                )
                proc.start()
                # The worker holds the only writer now: when it dies, the pipe reads EOF.
                writer.close()
                running[reader] = (proc, p)
            ready = set(_wait_ready([*running, *(proc.sentinel for proc, _ in running.values())]))
            for reader in [r for r, (proc, _) in running.items() if r in ready or proc.sentinel in ready]:
                proc, p = running.pop(reader)
                on_done(p, _collect(reader, proc))
    except BaseException:
        # Ctrl-C (KeyboardInterrupt), the CLI's SIGTERM exception, or a failure while saving a
        # result: end the workers now rather than leave them running, then re-raise.
        _stop(running)
        raise


def run_threads(
    pending: list[Point], max_workers: int | None, on_done: Callable[[Point, dict[str, Any]], None]
) -> None:
    """Run the points in threads of this process, at most `max_workers` at once.

    The core releases the GIL while it runs, so the threads run in parallel; there is no
    process to start and nothing to pickle. `on_done` is called in this (the calling) thread,
    one point at a time, as with the process backend. A point that aborts or segfaults takes
    the interpreter with it: that isolation is what the process backend is for.
    """
    workers = max_workers or _cores()
    workers = max(1, min(workers, len(pending)))
    stop = threading.Event()
    queue = list(reversed(pending))  # popped from the end: grid order
    running: dict[Future[dict[str, Any]], Point] = {}
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="flashlife-sweep")
    try:
        while queue or running:
            while queue and len(running) < workers:
                p = queue.pop()
                running[pool.submit(_run_point, p.spec, stop)] = p
            done, _ = _wait_futures(running, return_when=FIRST_COMPLETED)
            for fut in [f for f in running if f in done]:  # in the order they started
                on_done(running.pop(fut), fut.result())
    except BaseException:
        # Ctrl-C (KeyboardInterrupt), the CLI's SIGTERM exception, or a failure while saving a
        # result: the running runs stop at their next progress call; wait for them, re-raise.
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run_dask(
    pending: list[Point],
    client: Any,
    scheduler: str | None,
    on_done: Callable[[Point, dict[str, Any]], None],
) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError as e:
        raise ImportError(
            "flashlife.sweep(backend='dask') needs dask.distributed: pip install 'flashlife[dask]'"
        ) from e
    own = None
    if client is None:
        if scheduler is None:
            raise ValueError("sweep(backend='dask') needs client= (a dask.distributed.Client) or scheduler=")
        client = own = Client(scheduler)
    try:
        futures = {
            client.submit(_run_point, p.spec, key=f"flashlife-sweep-{p.key}", pure=False): p for p in pending
        }
        for fut in as_completed(list(futures)):
            try:
                outcome = fut.result()
            except (Exception, asyncio.CancelledError) as e:
                # A task that did not return: e.g. KilledWorker (its worker died, as many times
                # as the cluster allows), or a cancelled task. The point's error, not the sweep's.
                outcome = {"error": f"{type(e).__name__}: {e}"}
            on_done(futures[fut], outcome)
    finally:
        if own is not None:
            own.close()
