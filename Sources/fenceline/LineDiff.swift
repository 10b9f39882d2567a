/// A line diff for scenario failures: `-` expected, `+` actual, with two lines of context and `…`
/// between the groups it leaves out.
enum LineDiff {
    static func unified(expected: String, actual: String) -> String {
        let (old, oldEnds) = lines(of: expected)
        let (new, newEnds) = lines(of: actual)
        guard old != new else {
            guard oldEnds != newEnds else { return "" }
            return "  \\ no newline at the end of the \(oldEnds ? "output" : "expected events")\n"
        }
        // Longest common subsequence table; scenario outputs are small.
        guard old.count * new.count <= 4_000_000 else {
            let index =
                zip(old, new).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(old.count, new.count)
            return "  first difference at line \(index + 1)\n"
        }
        var table = Array(repeating: Array(repeating: 0, count: new.count + 1), count: old.count + 1)
        for i in stride(from: old.count - 1, through: 0, by: -1) {
            for j in stride(from: new.count - 1, through: 0, by: -1) {
                table[i][j] = old[i] == new[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var lines: [(mark: Character, text: String)] = []
        var i = 0
        var j = 0
        while i < old.count || j < new.count {
            if i < old.count, j < new.count, old[i] == new[j] {
                lines.append((" ", old[i]))
                i += 1
                j += 1
            } else if i < old.count, j == new.count || table[i + 1][j] >= table[i][j + 1] {
                lines.append(("-", old[i]))
                i += 1
            } else {
                lines.append(("+", new[j]))
                j += 1
            }
        }
        var output = ""
        var skipped = false
        for (index, line) in lines.enumerated() {
            let near = lines[max(0, index - 2)...min(lines.count - 1, index + 2)].contains { $0.mark != " " }
            guard line.mark != " " || near else {
                skipped = true
                continue
            }
            if skipped && !output.isEmpty { output += "  …\n" }
            skipped = false
            output += "  \(line.mark) \(line.text)\n"
        }
        return output
    }

    /// The lines of `text`, a final newline ending the last line rather than starting an empty one.
    private static func lines(of text: String) -> (lines: [String], endsWithNewline: Bool) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let endsWithNewline = lines.count > 1 && lines.last == ""
        if endsWithNewline || lines == [""] { lines.removeLast() }
        return (lines, endsWithNewline)
    }
}
