/// Overwrites `bytes` with zeros: a best effort to shorten the life of key material in memory.
func wipe(_ bytes: inout [UInt8]) {
    for index in bytes.indices { bytes[index] = 0 }
}
