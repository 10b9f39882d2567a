public import Fenceline
import FencelineFormats

extension TraceRenderer {
    /// A self-contained HTML page embedding the SVG, with a title, the legend (inside the picture),
    /// hover details and a table of the events, with their image attachments beside them (the only
    /// resources it loads, from the attachments' own URLs).
    ///
    /// Hovering an event marker shows its details in a box under the title and lights its table
    /// row; hovering a row lights the marker; clicking a marker scrolls to its row; hovering a
    /// track thickens it and names its device. Without JavaScript the SVG tooltips and the table
    /// still work.
    public func html(fixes: [Fix], events: [Event]) -> String {
        let scene = TraceScene(catalog: catalog, fixes: fixes, events: events)
        let layout = layout(scene, withHeader: false)
        let title = SVGText.escaped(self.title)
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title)</title>
            <style>\(Self.pageStylesheet)</style>
            </head>
            <body>
            <h1>\(title)</h1>
            <p class="summary">\(SVGText.escaped(summary(scene)))</p>
            <p id="fl-detail" class="detail">Hover over an event marker for its details.</p>
            <figure>

            """
        out += svgElement(scene, layout: layout)
        out += "</figure>\n"
        let placed = scene.marks.enumerated().map {
            (row: $0.offset, event: $0.element.event, mark: Optional($0.element))
        }
        let unplaced = scene.unplacedEvents.map { (row: -1, event: $0, mark: TraceScene.Mark?.none) }
        let rows = (placed + unplaced).sorted { ($0.event.sequence, $0.row) < ($1.event.sequence, $1.row) }
        out += "<h2>Events (\(rows.count))</h2>\n"
        if rows.isEmpty {
            out += "<p>No events.</p>\n"
        } else {
            out += "<table id=\"fl-events\">\n<thead><tr><th>#</th><th>time (UTC)</th><th>event</th><th>request</th>"
            out += "<th>device</th><th>distance</th><th>position</th>"
            let showsAttachments = rows.contains { !$0.event.content.attachments.isEmpty }
            if showsAttachments { out += "<th>attachments</th>" }
            out += "</tr></thead>\n<tbody>\n"
            for row in rows {
                out += tableRow(row.event, mark: row.mark, index: row.row, attachments: showsAttachments)
            }
            out += "</tbody>\n</table>\n"
        }
        out += "<script>\(Self.pageScript)</script>\n</body>\n</html>\n"
        return out
    }

    private func tableRow(_ event: Event, mark: TraceScene.Mark?, index: Int, attachments: Bool) -> String {
        let kind = event.kind == .state ? "state: \(event.state?.rawValue ?? "")" : event.kind.rawValue
        var row = index >= 0 ? "<tr id=\"fl-row\(index)\" data-marker=\"fl-ev\(index)\">" : "<tr>"
        row += "<td>\(event.sequence)</td><td>\(event.time.rfc3339)</td>"
        row += "<td><span class=\"kind\" style=\"background:\(RenderStyle.colour(of: event.kind))\"></span>\(kind)</td>"
        row += "<td>\(SVGText.escaped(event.requestID))</td><td>\(SVGText.escaped(event.device ?? "–"))</td>"
        row += "<td>\(event.distance.map { SVGText.fixed($0, digits: 1) + " m" } ?? "")</td><td>"
        if let mark {
            let coordinate = mark.coordinate
            row += SVGText.fixed(coordinate.latitude, digits: 6) + ", " + SVGText.fixed(coordinate.longitude, digits: 6)
            if mark.isEstimated { row += " <em>(nearest fix)</em>" }
        } else {
            row += "<em>none</em>"
        }
        row += "</td>"
        if attachments { row += "<td class=\"att\">\(Self.attachmentCell(event.content.attachments))</td>" }
        return row + "</tr>\n"
    }

    /// An event's attachments beside it: images as thumbnails (loaded from their own URLs, the one
    /// thing the page does not hold itself), anything else as a link, each titled by its id.
    static func attachmentCell(_ attachments: [NotificationAttachment]) -> String {
        attachments.map { attachment in
            let url = SVGText.escaped(attachment.url)
            let id = SVGText.escaped(attachment.id)
            guard isImage(attachment), attachment.thumbnailHidden != true else {
                return "<a href=\"\(url)\" title=\"\(id)\">\(id)</a>"
            }
            return "<a href=\"\(url)\" title=\"\(id)\"><img src=\"\(url)\" alt=\"\(id)\" loading=\"lazy\" "
                + "referrerpolicy=\"no-referrer\"></a>"
        }.joined(separator: " ")
    }

    /// Whether an attachment is an image, by its type or else its URL's extension.
    static func isImage(_ attachment: NotificationAttachment) -> Bool {
        if let type = attachment.type?.lowercased() {
            return type.hasPrefix("image/")
                || [
                    "public.png", "public.jpeg", "public.heic", "com.compuserve.gif", "public.image",
                    "org.webmproject.webp",
                ]
                .contains(type)
        }
        let path = attachment.url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? attachment.url
        let name = path.lowercased()
        return [".png", ".jpg", ".jpeg", ".gif", ".webp", ".heic", ".svg"].contains { name.hasSuffix($0) }
    }

    static let pageStylesheet = """
        body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;margin:16px 24px;color:#111827;background:#fff}\
        h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 8px}\
        .summary{margin:0 0 6px;color:#4b5563;font-size:13px}\
        .detail{margin:0 0 8px;padding:6px 10px;background:#f3f4f6;border-radius:4px;font-size:13px;min-height:1.2em}\
        figure{margin:0}figure svg{max-width:100%;height:auto;display:block}\
        .fl-event{cursor:pointer}.fl-event.hl path{stroke:#111827;stroke-width:2.5}\
        .fl-track:hover{stroke-width:4px;stroke-opacity:1}\
        table{border-collapse:collapse;font-size:12.5px}\
        th,td{padding:3px 10px;border-bottom:1px solid #e5e7eb;text-align:left;white-space:nowrap}\
        th{background:#f9fafb;position:sticky;top:0}tr.hl td{background:#fef3c7}\
        .kind{display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:6px}\
        td.att img{height:40px;max-width:80px;object-fit:cover;vertical-align:middle;border-radius:3px;margin-right:4px}
        """

    static let pageScript = """
        (function(){\
        var detail=document.getElementById("fl-detail");\
        function light(id,on){var m=document.getElementById(id),r=document.getElementById(id.replace("fl-ev","fl-row"));\
        if(m)m.classList.toggle("hl",on);if(r)r.classList.toggle("hl",on);}\
        document.querySelectorAll("g.fl-event[id]").forEach(function(m){\
        var t=m.querySelector("title");\
        m.addEventListener("mouseenter",function(){light(m.id,true);if(t)detail.textContent=t.textContent;});\
        m.addEventListener("mouseleave",function(){light(m.id,false);});\
        m.addEventListener("click",function(){var r=document.getElementById(m.id.replace("fl-ev","fl-row"));\
        if(r)r.scrollIntoView({block:"center"});});});\
        document.querySelectorAll("path.fl-track").forEach(function(p){var t=p.querySelector("title");\
        p.addEventListener("mouseenter",function(){if(t)detail.textContent=t.textContent;});});\
        document.querySelectorAll("tr[data-marker]").forEach(function(r){\
        r.addEventListener("mouseenter",function(){light(r.dataset.marker,true);});\
        r.addEventListener("mouseleave",function(){light(r.dataset.marker,false);});});\
        })();
        """
}
