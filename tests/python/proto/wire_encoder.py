"""The tiny raw protobuf encoder of the wire-format tests (never the generated classes): keys,
varints, length-delimited, fixed 32/64-bit, repeated and packed fields; and `roundtrip`, which
parses bytes into a message and checks that serializing it again gives back the same bytes."""
import struct

# ---------------------------------------------------------------- raw encoder


def varint(n):
    n &= (1 << 64) - 1  # negative int32/int64 are sign-extended to 10 bytes
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def key(num, wire_type):
    return varint(num << 3 | wire_type)


def vint(num, n):  # wire type 0: int32/int64/uint32/bool/enum
    return key(num, 0) + varint(n)


def ld(num, data):  # wire type 2: string/bytes/message/packed
    if isinstance(data, str):
        data = data.encode("utf-8")
    return key(num, 2) + varint(len(data)) + data


def f32(num, x):
    return key(num, 5) + struct.pack("<f", x)


def f64(num, x):
    return key(num, 1) + struct.pack("<d", x)


def rep(encode, num, values):  # unpacked repeated field
    return b"".join(encode(num, v) for v in values)


def packed_varints(num, values):
    return ld(num, b"".join(varint(v) for v in values))


def packed_f32(num, values):
    return ld(num, struct.pack("<%df" % len(values), *values))


def packed_f64(num, values):
    return ld(num, struct.pack("<%dd" % len(values), *values))


def roundtrip(cls, data):
    msg = cls()
    msg.ParseFromString(data)
    assert msg.SerializeToString() == data
    return msg
