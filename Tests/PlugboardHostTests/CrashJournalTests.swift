import Foundation
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardHost

/// The crash journal a host keeps in its state folder: the marker around calls into plug-in code, the window that
/// decides a quarantine, the bounds, and files that are not what the host wrote.
@Suite("crash journal", .timeLimit(.hangGuard))
struct CrashJournalTests {
    let folder = NSTemporaryDirectory() + "plugboard-crashes-\(UUID().uuidString.prefix(8))"

    func journal() throws -> CrashJournal {
        let journal = CrashJournal(folder: folder)
        try journal.prepareFolder()
        return journal
    }

    static func crash(_ id: String, _ version: String = "1.0.0", at seconds: Double) -> CrashJournal.Record {
        CrashJournal.Record(kind: .crash, time: Date(timeIntervalSince1970: seconds), pluginID: id, version: version, detail: "activate")
    }

    @Test func onlyCrashesOfTheSameReleaseWithinTheWindowCount() {
        let base = 1_800_000_000.0
        let records = [
            Self.crash("com.example.a", at: base - 601),  // outside a 10-minute window before `base`
            Self.crash("com.example.a", at: base - 600),
            Self.crash("com.example.a", "1.1.0", at: base - 10),  // another version
            Self.crash("com.example.b", at: base - 5),  // another plug-in
            Self.crash("com.example.a", at: base),
            Self.crash("com.example.a", at: base + 1),  // after the crash being judged
        ]
        let now = Date(timeIntervalSince1970: base)
        #expect(CrashJournal.crashes(of: "com.example.a", "1.0.0", in: records, within: .seconds(600), before: now) == 2)
        #expect(CrashJournal.crashes(of: "com.example.a", "1.0.0", in: records, within: .seconds(601), before: now) == 3)
        #expect(CrashJournal.crashes(of: "com.example.a", "1.1.0", in: records, within: .seconds(600), before: now) == 1)
        #expect(CrashJournal.crashes(of: "com.example.a", "1.0.0", in: records, within: .zero, before: now) == 1)
    }

    @Test func aReleaseLiftsTheQuarantineBeforeItAndCrashesCountAfreshAfterIt() throws {
        let journal = try journal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let base = 1_800_000_000.0
        func record(_ kind: CrashJournal.Record.Kind, at seconds: Double) -> CrashJournal.Record {
            CrashJournal.Record(
                kind: kind, time: Date(timeIntervalSince1970: seconds), pluginID: "com.example.a", version: "1.0.0", detail: "3")
        }
        let key = ReleaseCheck.key("com.example.a", "1.0.0")
        var records = [Self.crash("com.example.a", at: base), Self.crash("com.example.a", at: base + 1), record(.quarantine, at: base + 2)]
        records.append(record(.release, at: base + 3))
        records.append(Self.crash("com.example.a", at: base + 4))
        // Written and read back: the release stays after the quarantine it lifts, crashes apart.
        try journal.write(records)
        let read = journal.contents().records
        #expect(read.map(\.kind) == [.quarantine, .release, .crash, .crash, .crash])
        #expect(CrashJournal.quarantined(read)[key] == nil)
        #expect(
            CrashJournal.crashes(
                of: "com.example.a", "1.0.0", in: read, within: .seconds(600), before: Date(timeIntervalSince1970: base + 5))
                == 1)
        // A quarantine after the release holds again.
        #expect(CrashJournal.quarantined(read + [record(.quarantine, at: base + 6)])[key] != nil)
    }

    @Test func theJournalKeepsTheNewestRecordsWithinItsBoundsWithPrivateFiles() throws {
        let journal = try journal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var records = (0..<(CrashJournal.maxCrashes + 50)).map { Self.crash("com.example.p\($0)", at: 1_800_000_000 + Double($0)) }
        records += (0..<(CrashJournal.maxQuarantines + 20)).map {
            CrashJournal.Record(
                kind: .quarantine, time: Date(timeIntervalSince1970: 1_800_000_000), pluginID: "com.example.q\($0)", version: "1.0.0",
                detail: "3"
            )
        }
        try journal.write(records)
        let read = journal.contents()
        #expect(read.unreadable == 0)
        let crashes = read.records.filter { $0.kind == .crash }
        let quarantines = read.records.filter { $0.kind == .quarantine }
        #expect(crashes.count == CrashJournal.maxCrashes)
        #expect(crashes.first?.pluginID == "com.example.p50" && crashes.last?.pluginID == "com.example.p249")
        #expect(quarantines.count == CrashJournal.maxQuarantines && quarantines.first?.pluginID == "com.example.q20")
        #expect(CrashJournal.quarantined(read.records)[ReleaseCheck.key("com.example.q20", "1.0.0")] != nil)
        #expect(try FileManager.default.attributesOfItem(atPath: journal.journalPath)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int == 0o700)
        // Bounded on disk too: the whole journal fits in what is read of it.
        let size = try FileManager.default.attributesOfItem(atPath: journal.journalPath)[.size] as? Int ?? .max
        #expect(size <= CrashJournal.maxJournalBytes)
    }

    @Test func aJournalThatIsNotWhatTheHostWroteIsReadForWhatItHolds() throws {
        let journal = try journal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let good = Self.crash("com.example.a", at: 1_800_000_000)
        var bytes = Data("garbage\n\u{0}\u{1}binary\tcrash\n".utf8)
        bytes += Data(good.line.utf8)
        bytes += Data("crash\tnot-a-time\tcom.example.a\t1.0.0\tactivate\n".utf8)
        bytes += Data("crash\t2026-11-27T03:00:00.000Z\tcom.example.a\t1.0.0\n".utf8)  // a field short
        bytes += Data("crash\t2026-11-27T03:00:00.000Z\tcom example\t1.0.0\tactivate\n".utf8)  // a space in the id
        bytes += Data([0xFF, 0xFE, 0x0A])
        try bytes.write(to: URL(fileURLWithPath: journal.journalPath))
        let read = journal.contents()
        #expect(read.records == [good])
        #expect(read.unreadable == 6)

        // A file far larger than the bound: only its end is read, and the newest record in it is found.
        var huge = Data(repeating: UInt8(ascii: "x"), count: 4 * CrashJournal.maxJournalBytes)
        huge += Data(("\n" + good.line).utf8)
        try huge.write(to: URL(fileURLWithPath: journal.journalPath))
        let tail = journal.contents()
        #expect(tail.records == [good])
    }

    @Test func theMarkerNamesTheReleaseUntilTheCallReturns() throws {
        let journal = try journal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try journal.leftoverMarkers().get().isEmpty)
        try journal.writeMarker(CrashJournal.markerLine("com.example.a", "1.2.0", "activate"))
        let marker = try #require(try journal.leftoverMarkers().get().first)
        #expect(marker.pluginID == "com.example.a" && marker.version == "1.2.0" && marker.phase == "activate" && marker.pid == getpid())
        #expect(try FileManager.default.attributesOfItem(atPath: journal.markerPath)[.posixPermissions] as? Int == 0o600)
        journal.leave()
        #expect(try journal.leftoverMarkers().get().isEmpty)

        try Data("not\ta marker\n".utf8).write(to: URL(fileURLWithPath: journal.markerPath))
        #expect(throws: BoardError.self) { try journal.leftoverMarkers().get() }
    }

    @Test func callsInProgressAtOnceAreAllNamedAndEachLeavesItsOwnLine() async throws {
        let journal = try journal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let markers = CallMarkers(journal: journal)
        let a = markers.enter("com.example.a", "1.0.0", "call")
        let b = markers.enter("com.example.b", "2.0.0", "call")
        #expect(a.firstFailure == nil && b.firstFailure == nil)
        #expect(try journal.leftoverMarkers().get().map(\.pluginID) == ["com.example.a", "com.example.b"])
        markers.leave(a.token)
        #expect(try journal.leftoverMarkers().get().map(\.pluginID) == ["com.example.b"])
        markers.leave(b.token)
        #expect(try journal.leftoverMarkers().get().isEmpty)

        // Many threads at once: every call's line is there while it runs, and none is left once all returned.
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let id = "com.example.p\(index)"
                    let call = markers.enter(id, "1.0.0", "call")
                    let named = (try? journal.leftoverMarkers().get().contains { $0.pluginID == id }) ?? false
                    markers.leave(call.token)
                    return named
                }
            }
            for await named in group { #expect(named) }
        }
        #expect(try journal.leftoverMarkers().get().isEmpty)
    }

    @Test func aMarkerCutByItsBoundOrWithAForeignLineStillNamesItsCalls() throws {
        let journal = try journal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let good = CrashJournal.markerLine("com.example.a", "1.0.0", "call") + CrashJournal.markerLine("com.example.b", "2.0.0", "call")
        // A foreign line among them is skipped, the others still count.
        try Data((good + "not a marker line\n").utf8).write(to: URL(fileURLWithPath: journal.markerPath))
        #expect(try journal.leftoverMarkers().get().map(\.pluginID) == ["com.example.a", "com.example.b"])
        // A marker larger than the bound loses its last, cut line only.
        var big = ""
        while big.utf8.count < CrashJournal.maxMarkerBytes + 100 { big += CrashJournal.markerLine("com.example.c", "3.0.0", "call") }
        try Data((good + big).utf8).write(to: URL(fileURLWithPath: journal.markerPath))
        let markers = try journal.leftoverMarkers().get()
        #expect(
            markers.first?.pluginID == "com.example.a"
                && markers.allSatisfy { ["com.example.a", "com.example.b", "com.example.c"].contains($0.pluginID) })
        // The writer names at most CallMarkers.maxCalls calls; a closed one names none and removes the marker.
        let markersOfHost = CallMarkers(journal: journal)
        let tokens = (0..<(CallMarkers.maxCalls + 5)).map { markersOfHost.enter("com.example.p\($0)", "1.0.0", "call").token }
        #expect(try journal.leftoverMarkers().get().count == CallMarkers.maxCalls)
        markersOfHost.close()
        #expect(try journal.leftoverMarkers().get().isEmpty)
        for token in tokens { markersOfHost.leave(token) }
        #expect(try journal.leftoverMarkers().get().isEmpty)
    }

    /// Each call into plug-in code writes the marker (a temporary file and a `rename`) and the last to return removes it
    /// (`unlink`): many calls in a row leave no marker behind, so nothing is taken for a crash.
    @Test func enteringAndLeavingManyTimesLeavesNoMarkerAndNoCrash() throws {
        let journal = try journal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let markers = CallMarkers(journal: journal)
        for _ in 0..<200 {
            let call = markers.enter("com.example.alpha", "1.0.0", "activate")
            #expect(call.firstFailure == nil)
            markers.leave(call.token)
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/entering"))
    }
}

/// The host's side: a marker left by a process that died is a crash of that release; enough of them quarantine it.
@Suite("crash quarantine in the host", .timeLimit(.hangGuard), .serialized)
struct CrashQuarantineHostTests {
    func host(_ t: TestBoard, state: String, policy: CrashQuarantine?, safeMode: Bool = false) async throws -> PluginHost {
        var configuration = try await t.configuration(.boardFile)
        configuration.stateFolder = state
        configuration.crashQuarantine = policy
        configuration.safeMode = safeMode
        let host = PluginHost(configuration: configuration)
        for id in ["com.example.a", "com.example.b"] { host.register(id, version: "1.0.0") { _ in TestPlugin(id: id) } }
        return host
    }

    @Test func aReleaseLeftByDeadProcessesIsQuarantinedAtTheThreshold() async throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0").register("com.example.b", "1.0.0")
        let state = t.folder.appendingPathComponent("state").path
        let policy = CrashQuarantine(threshold: 2, window: .seconds(3600))
        let journal = CrashJournal(folder: state)

        // A clean run leaves no marker behind.
        let clean = try await host(t, state: state, policy: policy)
        await clean.start()
        await clean.stop()
        #expect(try journal.leftoverMarkers().get().isEmpty)
        #expect(journal.contents().records.isEmpty)

        // A process that died in a's activation left its marker: one crash, a still loads.
        try journal.writeMarker(CrashJournal.markerLine("com.example.a", "1.0.0", "activate"))
        let first = try await host(t, state: state, policy: policy)
        var warnings = first.events()
        await first.start()
        #expect(first.activePlugins.map(\.pluginID) == ["com.example.a", "com.example.b"])
        await first.stop()
        var said = await warnings.first {
            if case .warning(let text) = $0 { text.contains("died in the code of com.example.a@1.0.0") } else { false }
        }
        #expect(said != nil)
        #expect(journal.contents().records.map(\.kind) == [.crash])

        // The second crash within the window quarantines a@1.0.0; b loads.
        try journal.writeMarker(CrashJournal.markerLine("com.example.a", "1.0.0", "deactivate"))
        let second = try await host(t, state: state, policy: policy)
        warnings = second.events()
        let report = Dictionary(uniqueKeysWithValues: await second.start().map { ($0.pluginID, $0) })
        #expect(second.activePlugins.map(\.pluginID) == ["com.example.b"])
        #expect(report["com.example.a"]?.reasonCode == "quarantined", "\(report)")
        await second.stop()
        said = await warnings.first { if case .warning(let text) = $0 { text.contains("quarantines com.example.a@1.0.0") } else { false } }
        #expect(said != nil)
        let stored = try await t.loadStatus { rows in rows.contains { $0.pluginID == "com.example.a" && $0.reasonCode == "quarantined" } }
        #expect(stored.first { $0.pluginID == "com.example.a" }?.state == .skipped)

        // Without a policy the host neither reads nor writes the journal: a marker stays where it is.
        try journal.writeMarker(CrashJournal.markerLine("com.example.b", "1.0.0", "activate"))
        let untracked = try await host(t, state: state, policy: nil)
        await untracked.start()
        #expect(untracked.activePlugins.map(\.pluginID) == ["com.example.a", "com.example.b"])
        await untracked.stop()
        #expect(try journal.leftoverMarkers().get().first?.pluginID == "com.example.b")
    }

    @Test func aHostInSafeModeLoadsNothing() async throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0").register("com.example.b", "1.0.0", enable: false)
        let host = try await host(t, state: t.folder.appendingPathComponent("state").path, policy: CrashQuarantine(), safeMode: true)
        let report = Dictionary(uniqueKeysWithValues: await host.start().map { ($0.pluginID, $0) })
        #expect(host.activePlugins.isEmpty)
        #expect(report["com.example.a"]?.reasonCode == "safe_mode", "\(report)")
        #expect(report["com.example.b"]?.reasonCode == "disabled", "a plug-in skipped for its own reason keeps it: \(report)")
        await host.stop()
    }
}
