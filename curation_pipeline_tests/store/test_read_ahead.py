"""Reading ahead hands over every block in order, raises the reader's errors, and stops the
reading (closing its cursor) when the search stops early."""

from __future__ import annotations

import threading

import pytest

from curation_pipeline.store.read_ahead import read_ahead


def test_every_block_comes_in_order_and_is_read_in_another_thread():
    threads = set()

    def blocks():
        for n in range(50):
            threads.add(threading.current_thread().name)
            yield n

    assert list(read_ahead(blocks())) == list(range(50))
    assert threads == {"read-ahead"}


def test_an_error_of_the_reading_is_raised_to_the_search():
    def blocks():
        yield 1
        raise RuntimeError("connection lost")

    found = []
    with pytest.raises(RuntimeError, match="connection lost"):
        for block in read_ahead(blocks()):
            found.append(block)
    assert found == [1]


def test_a_search_that_stops_early_stops_the_reading_and_closes_its_cursor():
    closed = threading.Event()
    read = []

    def blocks():
        try:
            for n in range(1000):
                read.append(n)
                yield n
        finally:
            closed.set()  # where the cursor's `with` block ends

    stream = read_ahead(blocks(), depth=1)
    assert next(stream) == 0
    stream.close()
    assert closed.is_set()  # before close() returned
    assert len(read) <= 3  # the one handed over, the one waiting, the one being offered
