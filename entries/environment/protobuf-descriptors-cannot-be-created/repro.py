"""Reproducer for protobuf-descriptors-cannot-be-created.

`python repro.py`: a project ships `point_pb2.py`, generated from `point.proto` by an old
protoc (3.x before 3.19: the module builds each descriptor by calling
`_descriptor.Descriptor(...)` and `_descriptor.FieldDescriptor(...)`). With protobuf 4 or
later installed (7.36.2 here, whose default implementation is upb), descriptors can only
come from serialized files, so importing the module raises `TypeError: Descriptors cannot be
created directly.` with protobuf's advice to regenerate the code.
`python repro.py --fixed`: the first workaround the message names, the pure-Python
implementation (`PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python`, set before protobuf is
imported), which still accepts descriptors built that way. The check confirms the message
class works: `Point(x=3, y=-4)` serializes to exactly the bytes the protobuf wire format
prescribes (encoded by hand in the check, without protobuf) and parses back to the same
values.

`point_pb2.py` beside this script is written as protoc 3.x wrote such modules; nothing is
downloaded.
"""

import os
import sys

FIXED = "--fixed" in sys.argv[1:]
if FIXED:
    # --- fix: start
    os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"  # before protobuf is imported
    # --- fix: end

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import point_pb2  # noqa: E402


def varint(value: int) -> bytes:
    """The protobuf wire format's base-128 varint; negative int32 values take 10 bytes."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


point = point_pb2.Point(x=3, y=-4)
data = point.SerializeToString()
print("serialized:", data.hex())

# --- check: start
# Field 1 (x) and field 2 (y), both varints: tag = field number << 3 | wire type 0.
expected = bytes([1 << 3]) + varint(3) + bytes([2 << 3]) + varint(-4)
assert data == expected, (data.hex(), expected.hex())
parsed = point_pb2.Point.FromString(expected)
assert (parsed.x, parsed.y) == (3, -4), (parsed.x, parsed.y)
print(f"check: Point(x=3, y=-4) serializes to the reference bytes {expected.hex()} and parses back")
# --- check: end
