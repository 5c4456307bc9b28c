"""The types of the ``failpedia`` command's arguments: each turns a word of the command
line into a value, or into a usage error that says what it expects."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def shard(value: str) -> tuple[int, int]:
    """``I/N``, the I-th of N shares, as ``(I, N)`` with 1 <= I <= N."""
    index, _, count = value.partition("/")
    if not (index.isdigit() and count.isdigit()) or not 1 <= int(index) <= int(count):
        raise argparse.ArgumentTypeError(f"expected I/N with 1 <= I <= N, got {value!r}")
    return int(index), int(count)


def at_least(minimum: int) -> Callable[[str], int]:
    """An argument type: a whole number no smaller than ``minimum``."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}, not {text!r}")
        return value

    return whole_number


SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def size(text: str) -> int:
    """A size in bytes, with an optional K, M, G or T (powers of 1024): ``512M``, ``2G``."""
    number, unit = text.strip(), ""
    for suffix in ("IB", "B"):
        if number.upper().endswith(suffix) and len(number) > len(suffix):
            number = number[: -len(suffix)]
            break
    if number[-1:].upper() in SIZE_UNITS:
        number, unit = number[:-1], number[-1].upper()
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a size such as 512M or 2G, not {text!r}")
    return int(value * SIZE_UNITS[unit])


def context_lines(text: str) -> int:
    """How many lines to show around a line: a whole number from 0 to 50."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 50:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 50, not {text!r}")
    return value
