import CoreMetrics
import Fenceline
import Foundation
import Metrics
import Prometheus
import Synchronization

/// The service's metrics (SPEC §11, `GET /metrics`), made through swift-metrics on a Prometheus
/// registry of the server's own: nothing is bootstrapped globally, so two servers in one process
/// (the tests) keep their counts apart.
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let readings: CoreMetrics.Counter
    let skipped: CoreMetrics.Counter
    let stale: CoreMetrics.Counter
    /// Fixes some request's position filters dropped or took as a refresh (SPEC §12).
    let filtered: CoreMetrics.Counter
    let ingestLatency: CoreMetrics.Timer
    let webhookDeliveries: CoreMetrics.Counter
    let webhookFailures: CoreMetrics.Counter
    let webhookGivenUp: CoreMetrics.Counter
    let webhookBacklog: CoreMetrics.Gauge
    let devices: CoreMetrics.Gauge
    let requests: CoreMetrics.Gauge
    /// Open `GET /v1/events/stream` subscribers.
    private let subscriberGauge: CoreMetrics.Gauge
    private let subscriberCount = Atomic<Int>(0)
    /// One counter per event kind, made once: the factory looks a label up under a lock.
    private let events: [String: CoreMetrics.Counter]

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Ingest answers take from a fraction of a millisecond (a small batch) to seconds (16 MiB).
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        events = Dictionary(
            uniqueKeysWithValues: EventKind.allCases.map { kind in
                let counter = CoreMetrics.Counter(
                    label: "fenceline_events_total", dimensions: [("kind", kind.rawValue)], factory: factory)
                return (kind.rawValue, counter)
            })
        readings = CoreMetrics.Counter(label: "fenceline_readings_total", factory: factory)
        skipped = CoreMetrics.Counter(label: "fenceline_skipped_lines_total", factory: factory)
        stale = CoreMetrics.Counter(label: "fenceline_stale_readings_total", factory: factory)
        filtered = CoreMetrics.Counter(label: "fenceline_filtered_fixes_total", factory: factory)
        ingestLatency = CoreMetrics.Timer(label: "fenceline_ingest_duration_seconds", factory: factory)
        webhookDeliveries = CoreMetrics.Counter(label: "fenceline_webhook_deliveries_total", factory: factory)
        webhookFailures = CoreMetrics.Counter(label: "fenceline_webhook_failures_total", factory: factory)
        webhookGivenUp = CoreMetrics.Counter(label: "fenceline_webhook_given_up_total", factory: factory)
        webhookBacklog = CoreMetrics.Gauge(label: "fenceline_webhook_backlog", factory: factory)
        devices = CoreMetrics.Gauge(label: "fenceline_devices", factory: factory)
        requests = CoreMetrics.Gauge(label: "fenceline_pending_requests", factory: factory)
        subscriberGauge = CoreMetrics.Gauge(label: "fenceline_event_stream_subscribers", factory: factory)
        subscriberGauge.record(0)
    }

    /// Counts an event-stream subscriber in (`by: 1`) or out (`by: -1`).
    func countSubscriber(by change: Int) {
        subscriberGauge.record(subscriberCount.add(change, ordering: .relaxed).newValue)
    }

    /// Counts events of one kind (`enter`, `exit`, …).
    func countEvents(kind: String, _ count: Int) {
        events[kind]?.increment(by: count)
    }

    /// The Prometheus text exposition of every metric.
    func exposition() -> [UInt8] {
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        return bytes
    }
}
