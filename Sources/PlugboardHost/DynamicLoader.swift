import Crypto
import Foundation
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

    /// Is `PlugboardPluginAPI` a shared library in this process? If the host linked a static copy, a dynamic
    /// plug-in's types can never match the host's: casts fail. Returns the image path that provides it.
    static func interfaceImage() -> (shared: Bool, path: String) {
        // The class metadata of PluginRegistration lives in the image that defines the class.
        let address = UInt(bitPattern: unsafeBitCast(PluginRegistration.self as AnyClass, to: UnsafeRawPointer.self))
        let path = imagePath(containing: address) ?? "unknown"
        return (path.contains("libPlugboardPluginAPI"), path)
    }

    /// The file of the loaded image that contains `address`.
    private static func imagePath(containing address: UInt) -> String? {
        #if canImport(Darwin)
        var info = Dl_info()
        guard dladdr(UnsafeRawPointer(bitPattern: address), &info) != 0, let name = info.dli_fname else { return nil }
        return String(cString: name)
        #else
        // Glibc's dladdr is not visible to Swift; the kernel's map of this process says the same.
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6 else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16) else { continue }
            if address >= start && address < end { return fields[5...].joined(separator: " ") }
        }
        return nil
        #endif
    }

    /// SHA-256 of a file, hex; nil if it cannot be read.
    static func sha256(of path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// Loads the plug-in library at `path` whose content must hash to `expectedSHA256`.
    func load(pluginID: String, version: String, path: String, expectedSHA256: String, entry: String) -> Result<PluginRegistration, SkipReason> {
        let interface = Self.interfaceImage()
        guard interface.shared else {
            return .failure(SkipReason(.loadFailed, "this host links PlugboardPluginAPI statically (\(interface.path)), so dynamic plug-ins cannot share its types; add the PlugboardPluginAPI library product to the host app's dependencies"))
        }
        guard let bytes = FileManager.default.contents(atPath: path) else {
            return .failure(SkipReason(.loadFailed, "the artifact of \(pluginID)@\(version) is missing from the artifact store (\(path))"))
        }
        let actual = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        guard actual == expectedSHA256 else {
            return .failure(SkipReason(.digestMismatch, "the artifact of \(pluginID)@\(version) changed after registration (SHA-256 \(actual.prefix(12))…, registered \(expectedSHA256.prefix(12))…); it was not loaded"))
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
        if Self.sha256(of: copy) != expectedSHA256 {
            let temporary = copy + ".\(getpid()).tmp"
            guard FileManager.default.createFile(atPath: temporary, contents: bytes, attributes: [.posixPermissions: 0o500]),
                  rename(temporary, copy) == 0 else {
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
            return .failure(SkipReason(.loadFailed, "\(pluginID)@\(version) returned an object that is not this host's PluginRegistration: the plug-in links its own copy of PlugboardPluginAPI; link the PlugboardPluginAPI dynamic library product instead"))
        }
        guard registration.abiVersion == PluginABI.version else {
            return .failure(SkipReason(.loadFailed, "\(pluginID)@\(version) was built for plug-in ABI \(registration.abiVersion), this host speaks ABI \(PluginABI.version); rebuild the plug-in"))
        }
        guard registration.pluginID == pluginID else {
            return .failure(SkipReason(.loadFailed, "the library registered for \(pluginID) says it is \(registration.pluginID); refusing to load it under another id"))
        }
        return .success(registration)
    }
}
