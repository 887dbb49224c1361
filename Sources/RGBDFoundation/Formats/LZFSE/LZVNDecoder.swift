/// Decodes an LZVN block's payload (`bvxn`): a sequence of byte-aligned instructions,
/// each a literal (L bytes copied from the payload), a match (M bytes copied from D
/// bytes back in the output) or both, ending with the end-of-stream instruction.
///
/// The opcodes, by their first byte (L, M, D fields in its bits, the rest in the
/// following bytes, little-endian):
///
/// | first byte | instruction | fields |
/// |---|---|---|
/// | `LLMMMDDD` (low bits 0-5) + 1 byte | small distance | L 0-3, M 3-10, D 11 bits |
/// | `LLMMM110` | previous distance | L 0-3, M 3-10 |
/// | `LLMMM111` + 2 bytes | large distance | L 0-3, M 3-10, D 16 bits |
/// | `101LLMMM` + 2 bytes | medium distance | L 0-3, M 3-34, D 14 bits |
/// | `1110LLLL`, `11100000` + 1 byte | literal | L 1-15, 16-271 |
/// | `1111MMMM`, `11110000` + 1 byte | match, previous distance | M 1-15, 16-271 |
/// | `0x06` + 7 bytes | end of stream | |
/// | `0x0E`, `0x16` | no operation | |
/// | `0x1E`-`0x3E` ending in 110, `0x70`-`0x7F`, `0xD0`-`0xDF` | undefined: an error | |
///
/// The previous distance starts at 0 (none) in each block. The end-of-stream
/// instruction must end the payload exactly.
enum LZVNDecoder {
    /// Decodes `payload` into `window`, never past its end.
    static func decode(_ payload: UnsafeRawBufferPointer, into window: inout OutputWindow) throws {
        guard let source = payload.baseAddress else {
            throw LZFSE.error("empty LZVN block")
        }
        let end = payload.count
        var position = 0, distance = 0
        while true {
            guard position < end else { throw LZFSE.error("LZVN block ends without its end-of-stream instruction") }
            let opcode = Int(source.load(fromByteOffset: position, as: UInt8.self))
            let left = end - position
            @inline(__always) func byte(_ i: Int) -> Int { Int(source.load(fromByteOffset: position + i, as: UInt8.self)) }
            var length = 1, literal = 0, match = 0
            switch opcode {
            case 0x06:
                guard left == 8 else {
                    throw LZFSE.error(left < 8 ? "LZVN block truncated in its end-of-stream instruction"
                                               : "LZVN block has \(left - 8) bytes after its end-of-stream instruction")
                }
                return
            case 0x0E, 0x16:
                position += 1
                continue
            case 0x1E, 0x26, 0x2E, 0x36, 0x3E, 0x70...0x7F, 0xD0...0xDF:
                throw LZFSE.error("undefined LZVN opcode 0x\(String(opcode, radix: 16))")
            case 0xE0:
                guard left >= 2 else { throw truncated() }
                (length, literal) = (2, byte(1) + 16)
            case 0xE1...0xEF:
                literal = opcode & 0x0F
            case 0xF0:
                guard left >= 2 else { throw truncated() }
                (length, match) = (2, byte(1) + 16)
            case 0xF1...0xFF:
                match = opcode & 0x0F
            case 0xA0...0xBF:
                guard left >= 3 else { throw truncated() }
                let fields = byte(1) | (byte(2) << 8)
                (length, literal) = (3, (opcode >> 3) & 3)
                match = (((opcode & 7) << 2) | (fields & 3)) + 3
                distance = fields >> 2
            default:
                literal = opcode >> 6
                match = ((opcode >> 3) & 7) + 3
                switch opcode & 7 {
                case 6:
                    break  // the previous distance
                case 7:
                    guard left >= 3 else { throw truncated() }
                    length = 3
                    distance = byte(1) | (byte(2) << 8)
                default:
                    guard left >= 2 else { throw truncated() }
                    length = 2
                    distance = ((opcode & 7) << 8) | byte(1)
                }
            }
            guard left - length >= literal else { throw truncated() }
            guard literal + match <= window.room else {
                throw LZFSE.error("LZVN block decodes beyond its declared size")
            }
            position += length
            if literal > 0 {
                window.append(source + position, count: literal)
                position += literal
            }
            if match > 0 {
                guard distance > 0 && distance <= window.position else {
                    throw LZFSE.error("LZVN match distance \(distance) beyond the \(window.position) bytes decoded")
                }
                window.appendMatch(distance: distance, count: match)
            }
        }
    }

    private static func truncated() -> RGBDError {
        LZFSE.error("LZVN block truncated in an instruction")
    }
}
