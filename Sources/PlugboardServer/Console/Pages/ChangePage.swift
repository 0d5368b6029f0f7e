import PlugboardModel
import PlugboardOperations

/// `/ui/changes/{id}`: one change request, its card (``ChangeCardView``) as the whole page.
enum ChangePage {
    static func read(_ reads: ConsoleReads) throws -> ChangeCardView {
        let id = try ChangeOperations.RequestID(validating: reads.page.parameter ?? "")
        let request = try reads.perform(ChangeOperations.Show(id: id))
        return ChangeCard(request: request, viewer: try ChangesPage.Viewer(reads), page: reads.page).view(heading: "h1")
    }
}
