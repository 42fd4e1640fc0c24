"""Reading the next block from the database while the current one is being searched.

A server-side cursor is synchronous: while the search multiplies one block, the server waits for
the next FETCH, and while the server reads, the search waits. `read_ahead` runs the reading in a
thread one block ahead, so the two overlap (psycopg waits on the socket and numpy multiplies
without holding the GIL). At most `depth` blocks wait, so memory stays bounded.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from typing import TypeVar

Block = TypeVar("Block")

_END = object()


def read_ahead(blocks: Generator[Block, None, None], depth: int = 1) -> Iterator[Block]:
    """What `blocks` yields, in order, read up to `depth` blocks ahead in a thread.

    `blocks` runs entirely in that thread (its cursor opens and closes there); an error it raises
    is raised here. Stopping early (an error in the search, or not reading to the end) stops the
    reading and closes `blocks` before this generator returns.
    """
    ahead: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(item) -> bool:
        while not stop.is_set():
            try:
                ahead.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for block in blocks:
                if not offer((block, None)):
                    return
            offer((_END, None))
        except BaseException as error:  # handed to the reader, which raises it
            offer((_END, error))
        finally:
            blocks.close()

    reader = threading.Thread(target=produce, name="read-ahead", daemon=True)
    reader.start()
    try:
        while True:
            block, error = ahead.get()
            if block is _END:
                if error is not None:
                    raise error
                return
            yield block
    finally:
        stop.set()
        reader.join()
