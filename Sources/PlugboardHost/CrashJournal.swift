import Foundation
import PlugboardModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a host keeps in its state folder to notice the plug-in releases that crash it.
///
/// Before the host calls into a plug-in's code it writes the marker `entering` (a line per call in progress: the
/// release, what it is doing, the process id and the time; see `CallMarkers`) to a temporary file renamed over the last
/// one, and removes it when no call is in progress any more.
/// Once written, the marker survives any death of the process (a signal, a fatal error): the kernel holds it. It is
/// not `fsync`ed: that would only make it survive the machine's own crash, which no plug-in caused, at about ten
/// times the cost of each call.
/// A marker found at the next start means that the process died inside that release: the crash goes into the journal
/// `crashes`, one tab-separated line a record, bounded to ``maxCrashes`` crash lines and ``maxQuarantines``
/// quarantine and release lines and read with a size bound. A release line lifts the quarantine before it (the board
/// released it for this host) and starts the count of the release's crashes afresh. A line that cannot be read is
/// skipped, never fatal. Files are 0600, the folder 0700.
struct CrashJournal: Sendable {
    /// The marker's name in the state folder.
    static let markerName = "entering"
    /// The journal's name in the state folder.
    static let journalName = "crashes"
    /// Crash lines kept (the newest).
    static let maxCrashes = 200
    /// Quarantine and release lines kept (the newest).
    static let maxQuarantines = 100
    /// The most of the journal that is read (its end, where the newest lines are).
    static let maxJournalBytes = 64 * 1024
    /// The most of a marker that is read.
    static let maxMarkerBytes = 64 * 1024

    /// One line of the journal.
    struct Record: Sendable, Hashable {
        enum Kind: String, Sendable {
            /// The process died inside the release's code.
            case crash
            /// The release crashed the host too often: the host does not load it any more.
            case quarantine
            /// The board released the quarantine for this host: the host loads the release again.
            case release
        }

        let kind: Kind
        let time: Date
        let pluginID: String
        let version: String
        /// For a crash, what the host was doing (`create`, `activate`, `deactivate`, `load`); for a quarantine, how many
        /// crashes within the window decided it; for a release, when the board's release was made.
        let detail: String

        var line: String {
            [kind.rawValue, Timestamp.format(time), pluginID, version, detail].joined(separator: "\t") + "\n"
        }
    }

    /// The marker left by a process that died inside a plug-in's code.
    struct Marker: Sendable, Hashable {
        let pluginID: String
        let version: String
        /// What the host was doing: `create`, `activate`, `deactivate` or `load`.
        let phase: String
        let pid: Int32
        let time: Date
    }

    /// What the journal holds, and how many of its lines could not be read.
    struct Contents: Sendable {
        var records: [Record] = []
        var unreadable = 0
    }

    let folder: String
    let markerPath: String
    let temporaryMarkerPath: String
    let journalPath: String

    init(folder: String) {
        self.folder = folder
        markerPath = (folder as NSString).appendingPathComponent(Self.markerName)
        temporaryMarkerPath = markerPath + ".\(getpid()).tmp"
        journalPath = (folder as NSString).appendingPathComponent(Self.journalName)
    }

    static func isName(_ text: Substring, limit: Int) -> Bool {
        !text.isEmpty && text.utf8.count <= limit && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
    }

    // MARK: The marker (on every call into plug-in code: plain system calls, no Foundation)

    /// One line of the marker: a call into `pluginID@version`'s code for `phase`, by this process, now.
    static func markerLine(_ pluginID: String, _ version: String, _ phase: String) -> String {
        [pluginID, version, phase, String(getpid()), Timestamp.format(Date())].joined(separator: "\t") + "\n"
    }

    /// Replaces the marker with `text`: the lines of the calls in progress.
    func writeMarker(_ text: String) throws(BoardError) {
        try replace(markerPath, with: text, through: temporaryMarkerPath, sync: false)
    }

    /// Removes the marker: no call into plug-in code is in progress.
    func leave() {
        unlink(markerPath)
    }

    /// The calls in progress that the marker a previous process left names, each of them a release that may have
    /// crashed it: `.success([])` when there is no marker, `.failure` when one is there but is not a marker.
    func leftoverMarkers() -> Result<[Marker], BoardError> {
        guard let data = Self.read(markerPath, limit: Self.maxMarkerBytes, tail: false) else { return .success([]) }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        // A marker cut by the size bound loses its last, partial line, not its others.
        if data.count == Self.maxMarkerBytes || lines.last?.isEmpty == true { lines.removeLast() }
        var markers: [Marker] = []
        for line in lines {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            // A line that is not a call of this host's format is skipped; the others still name their releases.
            guard fields.count == 5, Self.isName(fields[0], limit: 255), Self.isName(fields[1], limit: 64),
                Self.isName(fields[2], limit: 32), let pid = Int32(fields[3]), let time = Timestamp.parse(String(fields[4]))
            else { continue }
            markers.append(Marker(pluginID: String(fields[0]), version: String(fields[1]), phase: String(fields[2]), pid: pid, time: time))
        }
        guard !markers.isEmpty else { return .failure(BoardError(.integrity, "\(markerPath) is not a marker of this host")) }
        return .success(markers)
    }

    // MARK: The journal

    /// The journal's records, oldest first; a missing journal is empty.
    func contents() -> Contents {
        guard let data = Self.read(journalPath, limit: Self.maxJournalBytes, tail: true) else { return Contents() }
        var contents = Contents()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        for (index, line) in lines.enumerated() {
            if let record = Record(line: line) {
                contents.records.append(record)
            } else if !(index == 0 && data.count == Self.maxJournalBytes) {
                contents.unreadable += 1  // a first line cut by the size bound is not counted
            }
        }
        return contents
    }

    /// Replaces the journal with `records` (the newest within the bounds), durably (`fsync`ed before the rename).
    func write(_ records: [Record]) throws(BoardError) {
        let crashes = records.filter { $0.kind == .crash }.suffix(Self.maxCrashes)
        // Quarantines and releases keep their order: a release lifts the quarantine before it.
        let decisions = records.filter { $0.kind != .crash }.suffix(Self.maxQuarantines)
        let text = (decisions + crashes).map(\.line).joined()
        try replace(journalPath, with: text, through: journalPath + ".\(getpid()).tmp", sync: true)
    }

    /// Makes the folder (0700) if it is missing.
    func prepareFolder() throws(BoardError) {
        guard !FileManager.default.fileExists(atPath: folder) else { return }
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw BoardError(.io, "cannot make the host's state folder \(folder): \(error.localizedDescription)")
        }
    }

    /// Up to `limit` bytes of the file at `path` (its last ones when `tail`); nil when it cannot be opened.
    static func read(_ path: String, limit: Int, tail: Bool) -> Data? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        if tail, let end = try? file.seekToEnd(), end > UInt64(limit) {
            try? file.seek(toOffset: end - UInt64(limit))
        } else {
            try? file.seek(toOffset: 0)
        }
        return (try? file.read(upToCount: limit)) ?? Data()
    }

}

/// Replaces the file at `path` with `text` (mode 0600): written to `temporary`, `fsync`ed when `sync`, renamed over
/// `path`. Plain system calls: it runs before every call into plug-in code.
private func replace(_ path: String, with text: String, through temporary: String, sync: Bool) throws(BoardError) {
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw BoardError(.io, "cannot write \(temporary): \(String(cString: strerror(errno)))") }
    var bytes = Array(text.utf8)
    let written = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress, $0.count) }
    let synced = sync ? fsync(descriptor) : 0
    close(descriptor)
    guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
        let error = BoardError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
        unlink(temporary)
        throw error
    }
}

extension CrashJournal {
    /// The crashes of `pluginID@version` in `records` within `window` before `time` (inclusive), and after the last
    /// release of its quarantine.
    static func crashes(of pluginID: String, _ version: String, in records: [Record], within window: Duration, before time: Date) -> Int {
        let seconds = Double(window.components.seconds) + Double(window.components.attoseconds) * 1e-18
        let released = records.last { $0.kind == .release && $0.pluginID == pluginID && $0.version == version }?.time ?? .distantPast
        return records.count {
            $0.kind == .crash && $0.pluginID == pluginID && $0.version == version && $0.time <= time && $0.time > released
                && time.timeIntervalSince($0.time) <= seconds
        }
    }

    /// The releases quarantined in `records` (and not released since), as `ReleaseCheck.key(_:_:)` with their
    /// quarantine record.
    static func quarantined(_ records: [Record]) -> [String: Record] {
        var releases: [String: Record] = [:]
        for record in records {
            switch record.kind {
            case .crash: continue
            case .quarantine: releases[ReleaseCheck.key(record.pluginID, record.version)] = record
            case .release: releases[ReleaseCheck.key(record.pluginID, record.version)] = nil
            }
        }
        return releases
    }
}

extension CrashJournal.Record {
    /// Reads a line, or nil for anything that is not a record.
    init?(line: Substring) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 5, let kind = Kind(rawValue: String(fields[0])), let time = Timestamp.parse(String(fields[1])),
            CrashJournal.isName(fields[2], limit: 255), CrashJournal.isName(fields[3], limit: 64),
            CrashJournal.isName(fields[4], limit: 32)
        else { return nil }
        self.init(kind: kind, time: time, pluginID: String(fields[2]), version: String(fields[3]), detail: String(fields[4]))
    }
}
