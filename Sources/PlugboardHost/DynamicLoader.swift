import Crypto
import Foundation
import PlugboardModel
import PlugboardPluginAPI

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Loads dynamic plug-ins: verifies the artifact's SHA-256 against the board, `dlopen`s a private copy of the
/// verified bytes (so the file cannot change between the check and the load), calls the entry symbol, and checks
/// the ABI version and the plug-in id. Libraries are never `dlclose`d: Swift libraries cannot be safely unloaded.
struct DynamicLoader: Sendable {
    /// A folder only this process's user can read, for verified copies.
    let cacheFolder: String

    /// Whether this process linked `PlugboardPluginAPI` as a shared library, decided once, before any plug-in
    /// is loaded (a plug-in would load the library itself). A host that links a static copy (by depending on the
    /// PlugboardHost product alone) can never share types with a dynamic plug-in: every cast would fail.
    ///
    /// Checked by image name rather than by the address of a symbol: linkers copy-relocate class metadata into
    /// executables, so an address can point into the executable even when the library is shared.
    static let interfaceIsShared: Bool = loadedImages().contains {
        $0.hasSuffix("/libPlugboardPluginAPI.so") || $0.hasSuffix("/libPlugboardPluginAPI.dylib")
    }

    /// The files of the images loaded in this process.
    static func loadedImages() -> [String] {
        #if canImport(Darwin)
        return (0..<_dyld_image_count()).compactMap { _dyld_get_image_name($0).map { String(cString: $0) } }
        #else
        // Read to the end: /proc files report a size of 0, so size-based reads stop after the first chunk.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/maps") else { return [] }
        defer { try? file.close() }
        let maps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        // "start-end perms offset dev inode   /path": only the path contains a slash.
        return maps.split(separator: "\n").compactMap { line in
            line.firstIndex(of: "/").map { String(line[$0...]) }
        }
        #endif
    }

    /// Loads the plug-in library at `path` whose content must hash to `expectedSHA256`.
    func load(pluginID: String, version: String, path: String, expectedSHA256: String, entry: String) -> Result<
        PluginRegistration, SkipReason
    > {
        guard Self.interfaceIsShared else {
            return .failure(
                SkipReason(
                    .loadFailed,
                    "this host links PlugboardPluginAPI statically, so dynamic plug-ins cannot share its types; add the PlugboardPluginAPI library product to the host app's dependencies"
                ))
        }
        guard let bytes = FileManager.default.contents(atPath: path) else {
            return .failure(SkipReason(.loadFailed, "the artifact of \(pluginID)@\(version) is missing from the artifact store (\(path))"))
        }
        let actual = SHA256.hash(data: bytes).hex
        guard actual == expectedSHA256 else {
            return .failure(
                SkipReason(
                    .digestMismatch,
                    "the artifact of \(pluginID)@\(version) changed after registration (SHA-256 \(actual.prefix(12))…, registered \(expectedSHA256.prefix(12))…); it was not loaded"
                ))
        }
        let folder = cacheFolder + "/plugboard-host-\(getuid())"
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            return .failure(SkipReason(.loadFailed, "cannot create the private folder \(folder) for plug-in libraries"))
        }
        var info = stat()
        guard stat(folder, &info) == 0, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            return .failure(SkipReason(.loadFailed, "the plug-in library folder \(folder) is not private to this user; remove it"))
        }
        let copy = folder + "/\(expectedSHA256).so"
        if FileDigest.sha256(ofFile: copy) != expectedSHA256 {
            let temporary = copy + ".\(getpid()).tmp"
            guard FileManager.default.createFile(atPath: temporary, contents: bytes, attributes: [.posixPermissions: 0o500]),
                rename(temporary, copy) == 0
            else {
                unlink(temporary)
                return .failure(SkipReason(.loadFailed, "cannot place a verified copy of \(pluginID)'s library in \(folder)"))
            }
        }
        guard let handle = dlopen(copy, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "unknown error"
            return .failure(SkipReason(.loadFailed, "dlopen failed for \(pluginID)@\(version): \(why)"))
        }
        guard let symbol = dlsym(handle, entry) else {
            return .failure(SkipReason(.loadFailed, "\(pluginID)@\(version) does not export the entry symbol \(entry)"))
        }
        typealias Entry = @convention(c) () -> UnsafeMutableRawPointer?
        guard let raw = unsafeBitCast(symbol, to: Entry.self)() else {
            return .failure(SkipReason(.loadFailed, "the entry symbol \(entry) of \(pluginID)@\(version) returned nothing"))
        }
        let object = Unmanaged<AnyObject>.fromOpaque(raw).takeRetainedValue()
        guard let registration = object as? PluginRegistration else {
            return .failure(
                SkipReason(
                    .loadFailed,
                    "\(pluginID)@\(version) returned an object that is not this host's PluginRegistration: the plug-in links its own copy of PlugboardPluginAPI; link the PlugboardPluginAPI dynamic library product instead"
                ))
        }
        guard registration.abiVersion == PluginABI.version else {
            return .failure(
                SkipReason(
                    .loadFailed,
                    "\(pluginID)@\(version) was built for plug-in ABI \(registration.abiVersion), this host speaks ABI \(PluginABI.version); rebuild the plug-in"
                ))
        }
        guard registration.pluginID == pluginID else {
            return .failure(
                SkipReason(
                    .loadFailed,
                    "the library registered for \(pluginID) says it is \(registration.pluginID); refusing to load it under another id"))
        }
        return .success(registration)
    }
}
