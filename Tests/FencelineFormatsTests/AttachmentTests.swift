import Fenceline
import FencelineFormats
import Foundation
import Testing

/// Media attachments (SPEC §8): read from the catalog, checked with the request id and JSON path,
/// their URLs filled in and percent-encoded, and carried by every output format.
@Suite struct AttachmentTests {
    static let circle = #""trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":150}"#

    func issues(_ content: String) -> [String] {
        let text = #"{"requests":[{"id":"r","content":"# + content + "," + Self.circle + "}]}"
        do {
            _ = try CatalogDecoder().decode(Array(text.utf8))
            return []
        } catch {
            return error.issues.map { "\($0.path): \($0.message)" }
        }
    }

    @Test func goodAttachmentsAreRead() throws {
        let text =
            #"{"requests":[{"id":"r","content":{"attachments":["#
            + #"{"id":"a","url":"https://x.example/a.png","type":"image/png","options":{"thumbnailHidden":false,"thumbnailClippingRect":{"x":0,"y":0.25,"width":1,"height":0.5},"thumbnailTime":2.5}},"#
            + #"{"id":"b","url":"file:///srv/b.jpg","type":"public.jpeg"},{"id":"c","url":"http://h/c","type":null,"options":null},"#
            + #"{"id":"d","url":"https://h/d","options":{"thumbnailClippingRect":null,"thumbnailTime":null}}]},"#
            + Self.circle + "}]}"
        let request = try CatalogDecoder().decode(Array(text.utf8)).catalog.requests[0]
        let attachments = request.content.attachments
        #expect(attachments.map(\.id) == ["a", "b", "c", "d"])
        #expect(attachments[0].thumbnailClippingRect == .init(x: 0, y: 0.25, width: 1, height: 0.5))
        #expect(attachments[0].thumbnailHidden == false && attachments[0].thumbnailTime == 2.5)
        #expect(attachments[1].type == "public.jpeg" && !attachments[1].hasOptions)
        #expect(attachments[2].type == nil && !attachments[2].hasOptions && !attachments[3].hasOptions)
    }

    @Test(
        arguments: [
            (#"{"attachments":{}}"#, "requests[0].content.attachments: expected an array"),
            (
                #"{"attachments":[{"url":"https://x/a"}]}"#,
                #"requests[0].content.attachments[0].id: missing field "id""#
            ),
            (#"{"attachments":[{"id":"a"}]}"#, #"requests[0].content.attachments[0].url: missing field "url""#),
            (#"{"attachments":[{"id":"","url":"https://x/a"}]}"#, "attachments[0].id: id must be a non-empty string"),
            (
                #"{"attachments":[{"id":"a","url":"https://x/a"},{"id":"a","url":"https://x/b"}]}"#,
                #"attachments[1].id: repeats the attachment id "a""#
            ),
            (#"{"attachments":[{"id":"a","url":"ftp://x/a"}]}"#, #"attachments[0].url: unsupported URL scheme "ftp""#),
            (
                #"{"attachments":[{"id":"a","url":"/srv/a.png"}]}"#,
                "attachments[0].url: \"/srv/a.png\" is not an absolute URL"
            ),
            (
                #"{"attachments":[{"id":"a","url":"https:/x"}]}"#,
                "attachments[0].url: \"https:/x\" is not an absolute URL"
            ),
            (#"{"attachments":[{"id":"a","url":"https:///a"}]}"#, "attachments[0].url: \"https:///a\" has no host"),
            (#"{"attachments":[{"id":"a","url":"https://x/a b"}]}"#, "attachments[0].url: the URL holds a space"),
            (
                #"{"attachments":[{"id":"a","url":"https://x/a","type":"png"}]}"#,
                #"attachments[0].type: "png" is neither"#
            ),
            (
                #"{"attachments":[{"id":"a","url":"https://x/a","options":{"thumbnailTime":-1}}]}"#,
                "attachments[0].options.thumbnailTime: thumbnailTime must be a number of seconds ≥ 0"
            ),
            (
                #"{"attachments":[{"id":"a","url":"https://x/a","options":{"thumbnailClippingRect":{"x":0,"y":0,"width":1.5,"height":1}}}]}"#,
                "attachments[0].options.thumbnailClippingRect.width: width must lie in 0…1"
            ),
            (
                #"{"attachments":[{"id":"a","url":"https://x/a","options":{"thumbnailClippingRect":{"x":0,"y":0,"width":1}}}]}"#,
                #"thumbnailClippingRect.height: missing field "height""#
            ),
            (
                #"{"attachments":[{"id":"a","url":"https://x/a","options":{"thumbnailHidden":"yes"}}]}"#,
                "options.thumbnailHidden: expected true or false"
            ),
        ])
    func badAttachmentsAreNamedByPath(content: String, expected: String) {
        let found = issues(content)
        #expect(found.contains { $0.contains(expected) }, "\(found)")
    }

    @Test func atMostTenAttachments() {
        let eleven = (0..<11).map { #"{"id":"a\#($0)","url":"https://x/\#($0)"}"# }.joined(separator: ",")
        #expect(issues(#"{"attachments":[\#(eleven)]}"#).contains { $0.contains("at most 10 attachments (got 11)") })
        let ten = (0..<10).map { #"{"id":"a\#($0)","url":"https://x/\#($0)"}"# }.joined(separator: ",")
        #expect(issues(#"{"attachments":[\#(ten)]}"#).isEmpty)
    }

    @Test func placeholdersInURLsArePercentEncoded() {
        let content = NotificationContent(
            title: "T", attachments: [.init(id: "a", url: "https://x/{request}/{device}.png?e={event}&t={time}")])
        let time = Timestamp(rfc3339: "2026-03-02T08:00:10Z")!
        let rendered = content.rendered(device: "truck 17/ä&x", request: "depot", event: "enter", time: time)
        #expect(
            rendered.attachments[0].url
                == "https://x/depot/truck%2017%2F%C3%A4%26x.png?e=enter&t=2026-03-02T08%3A00%3A10Z")
        // Without a placeholder the content is returned as it is.
        let plain = NotificationContent(attachments: [.init(id: "a", url: "https://x/a.png")])
        #expect(plain.rendered(device: "d", request: "r", event: "enter", time: time) == plain)
    }

    static let event = Event(
        sequence: 3, time: Timestamp(rfc3339: "2026-03-02T08:00:10Z")!, requestID: "depot", device: "truck-17",
        trigger: .region, kind: .enter,
        content: NotificationContent(
            title: "Depot", userInfo: JSONObject([(key: "attachments", value: .null), (key: "site", value: .null)]),
            attachments: [
                .init(
                    id: "site", url: "https://x/7.png", type: "image/png",
                    thumbnailClippingRect: .init(x: 0, y: 0, width: 0.5, height: 1)),
                .init(id: "clip", url: "https://x/7.mp4", thumbnailHidden: true, thumbnailTime: 1.5),
            ]))

    func encode(_ event: Event, _ encoder: some EventEncoder) -> String {
        var bytes: [UInt8] = []
        encoder.encode(event, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func apnsCarriesThemBesideApsWithMutableContent() throws {
        let line = encode(Self.event, APNsEventEncoder())
        #expect(
            line == #"""
                {"device":"truck-17","apns-collapse-id":"depot","payload":{"aps":{"alert":{"title":"Depot"},"mutable-content":1},"attachments":[{"id":"site","url":"https://x/7.png","type":"image/png","options":{"thumbnailClippingRect":{"x":0,"y":0,"width":0.5,"height":1}}},{"id":"clip","url":"https://x/7.mp4","options":{"thumbnailHidden":true,"thumbnailTime":1.5}}],"site":null}}

                """#)
        // A userInfo key named "attachments" yields to them; it is kept when there are none.
        var bare = Self.event
        bare.content.attachments = []
        let payload =
            try JSONSerialization.jsonObject(with: Data(encode(bare, APNsEventEncoder()).utf8)) as! [String: Any]
        let body = payload["payload"] as! [String: Any]
        #expect(body["attachments"] is NSNull)
        #expect((body["aps"] as! [String: Any])["mutable-content"] == nil)
    }

    @Test func everyOtherFormatCarriesThem() throws {
        let ndjson = encode(Self.event, NDJSONEventEncoder())
        let object = try JSONSerialization.jsonObject(with: Data(ndjson.utf8)) as! [String: Any]
        let content = object["content"] as! [String: Any]
        #expect((content["attachments"] as! [[String: Any]]).map { $0["id"] as! String } == ["site", "clip"])
        #expect(encode(Self.event, TextEventEncoder()).contains("[attachments: site, clip]"))
        #expect(encode(Self.event, GeoJSONEventEncoder()).contains(#""attachments":[{"id":"site""#))
    }
}
