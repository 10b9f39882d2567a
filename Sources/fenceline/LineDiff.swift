/// A line diff for scenario failures: `-` expected, `+` actual, with two lines of context.
enum LineDiff {
    static func unified(expected: String, actual: String) -> String {
        let old = expected.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let new = actual.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard old != new else { return "" }
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
            } else if j < new.count, i == old.count || table[i][j + 1] >= table[i + 1][j] {
                lines.append(("+", new[j]))
                j += 1
            } else {
                lines.append(("-", old[i]))
                i += 1
            }
        }
        var output = ""
        for (index, line) in lines.enumerated() {
            let near = lines[max(0, index - 2)...min(lines.count - 1, index + 2)].contains { $0.mark != " " }
            if line.mark != " " || near { output += "  \(line.mark) \(line.text)\n" }
        }
        return output
    }
}
