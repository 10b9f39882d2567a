#!/usr/bin/env python3
"""Write the synthetic scenarios under Data/scenarios (triggers, readings, args, README).

Usage: Tools/make-scenarios.py            # rewrites every synthetic scenario's inputs
       .build/debug/fenceline test --update Data/scenarios/NAME   # then record and review

Each scenario is small enough to check by hand against SPEC.md; the README line of each says
what it shows. Randomness (GPS noise) is seeded, so the files are the same on every run.
The real-data scenario (real-drive-visnjan) is not generated here: see Tools/gpx2ndjson.py;
filters-real-drive is made from its files (real fixes, with injected jumps), and so is
proximity-real-drives (its fixes twice, the second car 40 s behind the first).
"""
import json
import math
import os
import random

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Data", "scenarios")
R = 6371008.8
T0 = 1772438400  # 2026-03-02T08:00:00Z
CENTER = (52.37, 4.89)


def offset(east, north=0.0, origin=CENTER):
    """The point `east`/`north` metres from `origin` along a great circle (as the Swift fixtures do)."""
    lat1, lon1 = math.radians(origin[0]), math.radians(origin[1])
    distance = math.hypot(east, north)
    if distance == 0:
        return origin
    angular = distance / R
    bearing = math.atan2(east, north)
    lat2 = math.asin(math.sin(lat1) * math.cos(angular) + math.cos(lat1) * math.sin(angular) * math.cos(bearing))
    lon2 = lon1 + math.atan2(math.sin(bearing) * math.sin(angular) * math.cos(lat1),
                             math.cos(angular) - math.sin(lat1) * math.sin(lat2))
    return (math.degrees(lat2), math.degrees(lon2))


def time(seconds):
    whole = T0 + int(seconds)
    text = "2026-03-02T%02d:%02d:%02d" % ((whole // 3600) % 24, (whole // 60) % 60, whole % 60)
    fraction = seconds - int(seconds)
    return text + ("Z" if fraction == 0 else (".%03dZ" % round(fraction * 1000)))


def fix(device, seconds, point, accuracy=None):
    reading = {"device": device, "time": time(seconds), "lat": point[0], "lon": point[1]}
    if accuracy is not None:
        reading["accuracy"] = accuracy
    return reading


def circle(identifier, radius, center=CENTER, title=None, **trigger):
    request = {"id": identifier, "trigger": {"type": "region", "center": {"lat": center[0], "lon": center[1]},
                                             "radius": radius, **trigger}}
    if title:
        request["content"] = {"title": title, "body": "{device}: {event} " + identifier}
    return request


def write(name, readme, catalog, readings, args=None, extension="ndjson"):
    folder = os.path.join(ROOT, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "triggers.json"), "w") as f:
        json.dump(catalog, f, indent=2)
        f.write("\n")
    with open(os.path.join(folder, "readings." + extension), "w") as f:
        if extension == "ndjson":
            for reading in readings:
                f.write(reading if isinstance(reading, str) else json.dumps(reading, separators=(",", ":")))
                f.write("\n")
        else:
            f.write(readings)
    args_path = os.path.join(folder, "args.json")
    if args:
        with open(args_path, "w") as f:
            json.dump(args, f)
            f.write("\n")
    elif os.path.exists(args_path):
        os.remove(args_path)
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write("# %s\n\n%s\n" % (name, readme.strip()))


def jitter_at_edge():
    # A walker approaches a 50 m fence, stands 2 m outside its edge for 3 minutes while GPS
    # noise (σ 5 m, clipped to ±12 m) scatters the fixes across the boundary, steps inside,
    # then lingers at the edge again on the way out and walks off.
    rng = random.Random(2026)
    readings = []
    t = 0
    for east in range(150, 52, -5):
        readings.append(fix("walker", t, offset(east), 6)); t += 1
    for _ in range(180):
        noise = max(-12, min(12, rng.gauss(0, 5)))
        readings.append(fix("walker", t, offset(52 + noise, rng.gauss(0, 2)), 6)); t += 1
    for east in range(45, 0, -5):
        readings.append(fix("walker", t, offset(east), 6)); t += 1
    for east in range(0, 45, 5):
        readings.append(fix("walker", t, offset(east), 6)); t += 1
    for _ in range(120):
        noise = max(-12, min(12, rng.gauss(0, 5)))
        readings.append(fix("walker", t, offset(52 + noise, rng.gauss(0, 2)), 6)); t += 1
    for east in range(60, 200, 5):
        readings.append(fix("walker", t, offset(east), 6)); t += 1
    catalog = {"requests": [
        circle("edge-naive", 50, hysteresis="naive"),
        circle("edge-default", 50),
    ]}
    write("jitter-at-edge",
          "GPS jitter at a fence edge: with `naive` hysteresis the walker flaps in and out dozens of "
          "times; with the `default` preset (20 m exit cushion, 20 s exit delay) the same fixes give "
          "one enter and one exit.", catalog, readings)


def fast_vehicle_cross():
    # A car at 30 m/s with a fix every 10 s (300 m apart) drives east past three fences.
    readings = [fix("car", 10 * i, offset(-1500 + 300 * i, 0)) for i in range(11)]
    catalog = {"requests": [
        # Centred between the fixes at -300 and 0: no fix lands inside, the path passes through.
        circle("toll-gantry", 40, center=offset(-150), notifyOnCross=True, hysteresis="naive"),
        circle("toll-gantry-planar", 40, center=offset(-150), notifyOnCross=True, crossing="planar", hysteresis="naive"),
        # A fix lands inside: a real enter and exit, no cross.
        circle("rest-area", 60, center=offset(600), notifyOnCross=True, hysteresis="naive"),
        # 100 m north of the road: the path misses it.
        circle("farm", 40, center=offset(-150, 100), notifyOnCross=True, hysteresis="naive"),
    ]}
    write("fast-vehicle-cross",
          "A car at 108 km/h with one fix every 10 s jumps over a 40 m fence between two fixes: one "
          "`cross` (geodesic and planar paths agree on this short hop); a fence with a fix inside gives "
          "enter/exit instead, and one 100 m off the road gives nothing.", catalog, readings)


def antimeridian():
    # A ship near Fiji sails east across ±180° at about 5 m/s, a fix every 10 minutes.
    readings = []
    lon = 179.70
    for i in range(14):
        shown = lon if lon <= 180 else lon - 360
        readings.append(fix("ship", 600 * i, (-16.80, round(shown, 6))))
        lon += 0.05
    catalog = {"requests": [
        {"id": "dateline-box", "content": {"title": "Across the date line"},
         "trigger": {"type": "region", "hysteresis": "naive", "geometry": {"type": "Polygon", "coordinates": [[
             [179.85, -17.0], [-179.85, -17.0], [-179.85, -16.6], [179.85, -16.6], [179.85, -17.0]]]}}},
        {"id": "split-island", "content": {"title": "Natural Earth style split"},
         "trigger": {"type": "region", "hysteresis": "naive", "geometry": {"type": "MultiPolygon", "coordinates": [
             [[[179.95, -16.9], [180.0, -16.9], [180.0, -16.7], [179.95, -16.7], [179.95, -16.9]]],
             [[[-180.0, -16.9], [-179.95, -16.9], [-179.95, -16.7], [-180.0, -16.7], [-180.0, -16.9]]]]}}},
    ]}
    write("antimeridian",
          "Fences across ±180°: a polygon whose ring crosses the date line and a MultiPolygon cut at "
          "±180° as Natural Earth ships Fiji. A ship sailing east across the line enters and exits each "
          "once; the fix on the seam (lon 180) is inside both.", catalog, readings)


def antimeridian_joined_ring():
    # The ring a data set split at ±180° becomes when its parts are joined: vertices at exactly
    # 180 and -180 among others. A ship sails east through it along 16.9-17.0° S.
    ring = [[179.5, -17.2], [179.1, -17.4], [178.9, -17.0], [179.3, -16.8], [180.0, -16.6], [-179.8, -16.7],
            [-179.9, -17.0], [-180.0, -17.1], [179.5, -17.2]]
    track = [(178.7, -16.95), (179.0, -17.0), (179.3, -17.0), (179.7, -16.9), (180.0, -16.9), (-179.9, -16.9),
             (-179.85, -16.8), (-179.7, -16.8), (-179.5, -16.8)]
    readings = [fix("ship", 600 * i, (lat, lon)) for i, (lon, lat) in enumerate(track)]
    catalog = {"requests": [
        {"id": "joined-island", "content": {"title": "{event} joined-island"},
         "trigger": {"type": "region", "hysteresis": "naive", "geometry": {"type": "Polygon", "coordinates": [ring]}}},
    ]}
    write("antimeridian-joined-ring",
          "A single ring that crosses ±180° with vertices at exactly 180 and −180 (parts of a split island "
          "joined again): as given in lon/lat it crosses itself, unwrapped relative to the ring it is simple, "
          "so it is valid (SPEC §5). The ship enters west of the line, stays inside on the seam and east of "
          "it, and exits past the ring's eastern edge.", catalog, readings)


def boundary_and_cushions():
    # Circle of 100 m: fixes at signed distances chosen to hit the boundary and the cushions exactly.
    distances = [200, 0, 0.5, -10, 10, 20, 20.5, 5, -5]
    catalog = {"requests": [
        circle("naive", 100, hysteresis="naive"),
        circle("cushioned", 100, hysteresis={"enterCushion": 10, "exitCushion": 20, "exitDelay": 0}),
    ]}
    readings = [fix("d", 10 * i, offset(100 + s)) for i, s in enumerate(distances)]
    write("boundary-and-cushions",
          "Exact boundary cases: a fix exactly on the circle is inside (naive enters at s = 0); with "
          "cushions 10 in / 20 out a fix exactly 10 m inside enters, exactly 20 m outside does not "
          "exit, 20.5 m does.", catalog, readings)


def delays_and_timers():
    # Default preset with a 10 s enter delay: timers confirm transitions after the fixes stop.
    readings = [
        fix("d", 0, offset(300)),
        fix("d", 10, offset(50)),   # enter streak, due 20
        fix("d", 15, offset(40)),
        fix("d", 20, offset(30)),   # evidence at the due instant: applied first, still inside
        fix("d", 40, offset(200)),  # exit streak, due 60
        fix("d", 50, offset(110)),  # band (s = 10): cancels
        fix("d", 55, offset(200)),  # new exit streak, due 75; then silence
        fix("other", 120, offset(5000)),  # another device moves the clock past 75
    ]
    catalog = {"requests": [circle("gate", 100, hysteresis={"enterDelay": 10})]}
    write("delays-and-timers",
          "Enter and exit delays: the enter is confirmed by its timer at since + 10 s (a fix stamped at "
          "the due instant is applied first); a band fix cancels the exit streak; the second streak is "
          "confirmed by the timer at 75 s although the device sent nothing more.", catalog, readings)


def min_fixes():
    readings = [fix("d", 0, offset(300))]
    readings += [fix("d", t, offset(0)) for t in (5, 6)]        # two inside, then out: no enter
    readings += [fix("d", 7, offset(300))]
    readings += [fix("d", t, offset(0)) for t in (8, 9, 10)]    # three in a row: enter at 10
    readings += [fix("d", t, offset(300)) for t in (11, 12, 13)]  # three out: exit at 13
    catalog = {"requests": [circle("gate", 100, hysteresis={"preset": "naive", "minFixes": 3})]}
    write("min-fixes",
          "`minFixes: 3`: two inside fixes then one outside confirm nothing; three in a row enter at the "
          "third, and three outside exit at the third (`since` is the first of each streak).", catalog, readings)


def accuracy_modes():
    # One device walks in and out of a 100 m circle with a 20 m accuracy; each request reads the
    # accuracy differently. One fix with accuracy 500 is ignored where maxAccuracy is 50.
    steps = [(0, 200), (10, 115), (20, 105), (30, 95), (40, 85), (50, 75), (60, 95), (70, 105), (80, 115), (90, 125)]
    readings = [fix("d", t, offset(east), 20) for t, east in steps]
    readings.insert(6, fix("d", 55, offset(400), 500))
    catalog = {"requests": [
        circle("ignore", 100, hysteresis={"preset": "naive", "accuracy": "ignore"}),
        circle("conservative", 100, hysteresis={"preset": "naive", "accuracy": "conservative"}),
        circle("generous", 100, hysteresis={"preset": "naive", "accuracy": "generous"}),
        circle("android", 100, hysteresis="android"),
        circle("filtered", 100, hysteresis={"preset": "naive", "maxAccuracy": 50}),
    ]}
    write("accuracy-modes",
          "The four accuracy modes on one walk with 20 m accuracy: `generous` enters first (s − a ≤ 0, "
          "from 15 m outside), `ignore` at the first fix inside, `android` once 85 % of the accuracy disc "
          "is inside, `conservative` last (s + a ≤ 0). A fix 300 m out with 500 m accuracy makes `ignore` "
          "exit (it trusts the position) and `android` exit (4 % of the disc inside); `conservative` and "
          "`generous` stay (s − a < 0) and `filtered` ignores it (maxAccuracy 50). ", catalog, readings)


def initial_policies():
    readings = [fix("inside-dev", 0, offset(10)), fix("outside-dev", 0, offset(300)),
                fix("far-dev", 1, offset(20000)),
                fix("inside-dev", 10, offset(300)), fix("outside-dev", 10, offset(10)),
                fix("inside-dev", 100, offset(350))]
    catalog = {"requests": [
        circle("silent", 100, hysteresis="naive"),
        circle("enter", 100, hysteresis="naive", initial="enter", notifyOnDwell=True, dwell=5),
        circle("state", 100, hysteresis="naive", initial="state"),
    ]}
    write("initial-policies",
          "A device's first fix sets its state without delays: `silent` reports nothing, `enter` fires "
          "`enter` for a device that starts inside (and its dwell follows), `state` reports inside or "
          "outside for every device, even one 20 km away.", catalog, readings)


def dwell():
    readings = [fix("d", 0, offset(300)), fix("d", 10, offset(0)), fix("d", 40, offset(10)),
                fix("d", 80, offset(20)), fix("d", 90, offset(300)),       # visit 1: dwell at 70
                fix("d", 100, offset(0)), fix("d", 160, offset(300)),      # visit 2: exit at the due time wins
                fix("d", 200, offset(0)), fix("d", 215, offset(300)), fix("d", 300, offset(300))]  # visit 3: exit delay
    catalog = {"requests": [
        circle("naive-dwell", 100, hysteresis="naive", notifyOnDwell=True, dwell=60),
        circle("delayed-exit", 100, hysteresis={"enterCushion": 0, "exitCushion": 0, "exitDelay": 50},
               notifyOnDwell=True, dwell=60, notifyOnEntry=False),
    ]}
    write("dwell",
          "One `dwell` per visit at enter + 60 s. `naive-dwell`: dwell at 70 s in the first visit; in the "
          "second an exit fix stamped exactly at the due time (160 s) wins, so no dwell. `delayed-exit` "
          "(50 s exit delay, enters muted): the short trips out never confirm an exit, so it is one visit "
          "with one dwell at 70 s and an exit at 265 s. ", catalog, readings)


def repeats_false():
    readings = []
    for device, start in (("a", 0), ("b", 3)):
        readings += [fix(device, start + 10 * i, offset(300 if i % 2 == 0 else 0)) for i in range(5)]
    readings.sort(key=lambda r: r["time"])
    catalog = {"requests": [
        circle("once", 100, hysteresis="naive", repeats=False),
        circle("exit-once", 100, hysteresis="naive", repeats=False, notifyOnEntry=False),
    ]}
    write("repeats-false",
          "`repeats: false`: each device gets only the first notified event (`once`: its first enter; "
          "`exit-once`, with entries muted: its first exit); muted transitions do not use it up.", catalog, readings)


def devices_scope():
    readings = []
    for device in ("truck-17", "truck-18", "van-2"):
        readings += [fix(device, 0, offset(300)), fix(device, 5, offset(0)), fix(device, 10, offset(300))]
    readings.sort(key=lambda r: (r["time"], r["device"]))
    catalog = {"requests": [
        circle("depot", 100, hysteresis="naive"),
        {**circle("trucks-only", 100, hysteresis="naive"), "devices": ["truck-17", "truck-18"]},
    ]}
    write("devices-scope",
          "A request with `devices` applies only to the listed devices: `trucks-only` fires for the two "
          "trucks, `depot` (no scope) for every device including the van.", catalog, readings)


def stale_readings():
    readings = [fix("d", 0, offset(300)), fix("d", 10, offset(0)), fix("d", 5, offset(300)),
                fix("d", 10, offset(300)), fix("e", 3, offset(0)), fix("e", 4, offset(300))]
    catalog = {"requests": [circle("gate", 100, hysteresis="naive")]}
    write("stale-readings",
          "Per device, a reading older than that device's last one is stale and skipped (d at 5 s); "
          "equal times apply in input order (d at 10 s enters then exits, listed exit first within the "
          "instant). Device e's readings are older than the clock but not stale for e, so they apply.",
          catalog, readings)


def reorder_window():
    ordered = [fix("d", t, offset(east)) for t, east in [(0, 300), (1, 0), (2, 300), (3, 0), (4, 300), (5, 300)]]
    shuffled = [ordered[0], ordered[2], ordered[1], ordered[4], ordered[3], ordered[5]]
    catalog = {"requests": [circle("gate", 100, hysteresis="naive")]}
    write("reorder-window",
          "Readings that arrive out of order within 3 s are held by `--reorder-window 3` and applied in "
          "time order: the events equal those of the sorted input (enter 1, exit 2, enter 3, exit 4).",
          catalog, shuffled, args=["--reorder-window", "3"])


def until_timers():
    readings = [fix("d", 0, offset(0)), fix("d", 10, offset(300))]
    catalog = {"requests": [circle("gate", 100)]}
    write("until-fires-timers",
          "The exit streak starts at 10 s and is due at 30 s, after the last reading. `--until` moves the "
          "clock at the end of input, so the timer fires: one exit at 30 s.",
          catalog, readings, args=["--until", time(60)])


def control_records():
    readings = [
        fix("d", 0, offset(300)),
        {"time": time(5), "op": "add", "request": circle("late", 100, hysteresis="naive", title="Late")},
        fix("d", 10, offset(0)),     # enter "late" (known outside since 0? no: added at 5, so first fix: silent)
        fix("d", 20, offset(300)),   # exit "late"
        fix("d", 30, offset(0)),     # enter "late"
        {"time": time(35), "op": "add", "request": circle("late", 100, hysteresis="naive", title="Late, replaced")},
        fix("d", 40, offset(0)),     # first fix for the replacement: silent
        fix("d", 50, offset(300)),   # exit, with the new content
        {"op": "removePending", "ids": ["late"]},
        fix("d", 60, offset(0)),     # nothing: removed
        {"time": time(70), "op": "add", "request": {"id": "broken", "trigger": {"type": "region", "center": {"lat": 52.37, "lon": 4.89}, "radius": -1}}},
        {"time": time(80), "op": "tick"},
    ]
    catalog = {"requests": []}
    write("control-records",
          "Control records mid-stream: `add` a request (a device's first fix after the add is silent), "
          "re-`add` the same id (state starts afresh, new content), `removePending` (no more events), an "
          "invalid `add` (a bad line, skipped), and `tick`.", catalog, readings)


def polygons_and_holes():
    def ring(half_lat, half_lon):
        la, lo = CENTER
        return [[lo - half_lon, la - half_lat], [lo + half_lon, la - half_lat], [lo + half_lon, la + half_lat],
                [lo - half_lon, la + half_lat], [lo - half_lon, la - half_lat]]
    donut = {"type": "Polygon", "coordinates": [ring(0.004, 0.006), ring(0.001, 0.0015)]}
    island = {"type": "MultiPolygon", "coordinates": [[ring(0.004, 0.006)],
                                                       [[[p[0] + 0.02, p[1]] for p in ring(0.002, 0.003)]]]}
    catalog = {"requests": [
        {"id": "donut", "trigger": {"type": "region", "geometry": donut, "hysteresis": "naive"}},
        {"id": "islands", "trigger": {"type": "region", "geometry": island, "hysteresis": "naive"}},
    ]}
    # West to east along the centre latitude: ring, hole, ring, sea, second island, sea.
    points = [-900, -300, 0, 300, 700, 1360, 1800]
    readings = [fix("boat", 10 * i, offset(east)) for i, east in enumerate(points)]
    write("polygons-and-holes",
          "A polygon with a hole and a MultiPolygon: crossing the hole exits and re-enters `donut`; "
          "`islands` (the same outer ring without the hole, plus a second island 1.4 km east) stays "
          "entered over the hole and is entered again on the second island. ", catalog, readings)


def corridor():
    line = [[4.880, 52.370], [4.890, 52.370], [4.895, 52.374]]
    catalog = {"requests": [
        {"id": "route-7", "content": {"title": "Off route"}, "trigger": {
            "type": "region", "geometry": {"type": "LineString", "coordinates": line}, "corridor": 30,
            "notifyOnEntry": False, "hysteresis": {"exitCushion": 10, "exitDelay": 10}}},
    ]}
    readings = [fix("bus", 0, offset(-600, 5)), fix("bus", 10, offset(-300, -10)), fix("bus", 20, offset(0, 15)),
                fix("bus", 30, offset(200, 80)), fix("bus", 40, offset(250, 120)), fix("bus", 50, offset(300, 150)),
                fix("bus", 60, offset(330, 440))]
    write("corridor",
          "A route corridor (LineString, 30 m wide) watched for deviations: `notifyOnEntry: false`, exit "
          "after 40 m off the line for 10 s. The bus follows the route, cuts a corner 80+ m off it, and "
          "the exit is confirmed 10 s after the first fix beyond the cushion.", catalog, readings)


def geojson_catalog():
    catalog = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "id": "gate", "geometry": {"type": "Point", "coordinates": [CENTER[1], CENTER[0]]},
         "properties": {"radius": 100, "hysteresis": "naive", "content": {"title": "Gate", "body": "{device} {event}"}}},
        {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[[4.8925, 52.369], [4.895, 52.369],
                                                                              [4.895, 52.371], [4.8925, 52.371], [4.8925, 52.369]]]},
         "properties": {"id": "yard", "hysteresis": "naive", "initial": "state"}},
    ]}
    readings = [fix("d", 0, offset(-300)), fix("d", 10, offset(0)), fix("d", 20, offset(250)), fix("d", 30, offset(600))]
    write("geojson-catalog",
          "A GeoJSON FeatureCollection as the catalog: a Point with `properties.radius` is a circle, a "
          "Polygon a polygon fence; ids come from the Feature or its properties.", catalog, readings)


def event_ordering():
    def square(identifier, west):
        return {"id": identifier, "trigger": {"type": "region", "hysteresis": "naive", "geometry": {
            "type": "Polygon", "coordinates": [[[west, 52.369], [west + 0.002, 52.369], [west + 0.002, 52.371],
                                                [west, 52.371], [west, 52.369]]]}}}
    catalog = {"requests": [square("a-west", 4.888), square("b-east", 4.890)]}
    east_point, west_point = (52.37, 4.891), (52.37, 4.889)
    readings = [fix("y", 0, east_point), fix("x", 0, east_point), fix("y", 10, west_point), fix("x", 10, west_point)]
    write("event-ordering",
          "Two devices step from one fence into the touching one at the same instant: the events leave "
          "exits first, then enters, each ordered by request id, then device (SPEC §4).", catalog, readings)


def csv_input():
    rows = ["device,time,lat,lon,accuracy"]
    for t, east in [(0, 300), (10, 50), (20, 0), (30, 300), (60, 310)]:
        lat, lon = offset(east)
        rows.append("cyclist,%s,%s,%s,5" % (time(t), lat, lon))
    rows.append('"cyclist",not-a-time,52.37,4.89,5')
    catalog = {"requests": [circle("gate", 100)]}
    write("csv-input",
          "Readings as CSV with a header: the same semantics as NDJSON (enter at once, exit 20 s after "
          "the first fix beyond the cushion). A row with a bad time is skipped and reported.",
          catalog, "\n".join(rows) + "\n", extension="csv")


def bad_lines():
    readings = [
        fix("d", 0, offset(300)),
        '{"device":"d","time":"2026-03-02T08:00:05Z","lat":"52.37","lon":4.89}',
        fix("d", 10, offset(0)),
        '{"device":"d","time":"2026-03-02T08:00:15Z","lat":52.37,"lon":190}',
        'not json at all',
        '{"device":"d","time":"yesterday","lat":52.37,"lon":4.89}',
        '{"device":"d","time":"2026-03-02T08:00:18Z","lat":52.37,"lon":4.89',
        fix("d", 20, offset(300)),
    ]
    catalog = {"requests": [circle("gate", 100, hysteresis="naive")]}
    write("bad-lines",
          "Malformed and hostile lines (a string latitude, longitude 190, not JSON, a bad time, a truncated "
          "object) are skipped and reported; the good lines around them still give enter and exit.",
          catalog, readings)


def write_index():
    """Data/scenarios/README.md: one line per scenario, from each scenario's README."""
    lines = ["# Scenarios", "", "Run them with `fenceline test Data/scenarios` (Tools/test does). Each folder's README says",
             "what it shows; `expected.ndjson` holds the events, recorded with `--update` and checked by hand.", "",
             "| scenario | what it shows |", "| --- | --- |"]
    for name in sorted(os.listdir(ROOT)):
        path = os.path.join(ROOT, name, "README.md")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            text = " ".join(line.strip() for line in f.read().split("\n")[2:] if line.strip())
        lines.append("| [%s](%s/) | %s |" % (name, name, text.replace("|", "\\|")))
    with open(os.path.join(ROOT, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


BEACON = "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"


def seen(device, seconds, rssi, major=1, minor=7, uuid=BEACON, tx=None):
    beacon = {"uuid": uuid, "major": major, "minor": minor, "rssi": rssi}
    if tx is not None:
        beacon["txPower"] = tx
    return {"device": device, "time": time(seconds), "beacon": beacon}


def beacon(identifier, title=None, **trigger):
    request = {"id": identifier, "trigger": {"type": "beacon", "uuid": BEACON, **trigger}}
    if title:
        request["content"] = {"title": title}
    return request


def beacon_wildcards():
    catalog = {"requests": [beacon("any-major"), beacon("floor-2", major=2), beacon("dock-7", major=2, minor=7)]}
    readings = [seen("phone-a", 0, -60, 2, 7), seen("phone-b", 1, -60, 2, 9), seen("phone-c", 2, -60, 3, 7)]
    write("beacon-wildcards",
          "Beacon regions match by identity: `any-major` (uuid only) enters for all three phones, `floor-2` "
          "(major 2, any minor) for the two hearing major 2, `dock-7` (major 2, minor 7) for one. Exits follow "
          "30 s after each phone's last sighting (`--until`).", catalog, readings, args=["--until", time(60)])


def beacon_timeout_boundary():
    catalog = {"requests": [beacon("dock", exitTimeout=30)]}
    readings = [seen("kept", 0, -60), seen("lost", 0, -60), seen("kept", 30, -60), seen("lost", 30.5, -60),
                seen("other", 70, -60)]
    write("beacon-timeout-boundary",
          "Exit by timeout at the boundary: unseen for exactly `exitTimeout` (30 s) is not yet an exit, so the "
          "phone seen again at 30 s stays inside and exits at 60 s; the one seen at 30.5 s had already exited at "
          "30 s (the event carries the due time) and enters again.", catalog, readings)


def beacon_smoothing_outlier():
    catalog = {"requests": [
        beacon("raw", proximity="near", window=0.001, exitDelay=0),
        beacon("smoothed", proximity="near", window=10, exitDelay=0),
    ]}
    rssi = [-60, -61, -59, -60, -95, -60, -61, -60]
    readings = [seen("phone", i, r) for i, r in enumerate(rssi)]
    write("beacon-smoothing-outlier",
          "One −95 dBm outlier among −60 dBm sightings: without smoothing (`raw`, a 1 ms window) it reads as far "
          "and exits at once (then re-enters); the trimmed running average (`smoothed`, 10 s window) drops it "
          "and stays near. Exits at the end come from the 30 s timeout.", catalog, readings, args=["--until", time(60)])


def beacon_band_after_empty_window():
    # Sightings every 5 s with a 2 s window: each restarts the average. The first reads 2.58 m (near);
    # the next three 3.11, 3.20 and 3.28 m, inside the 3.3 m band, so they stay near and count.
    catalog = {"requests": [beacon("dock", proximity="near", window=2, exitDelay=0, title="{event} dock")]}
    readings = [seen("phone", 5 * i, rssi, tx=-59) for i, rssi in enumerate([-74, -76.5, -76.9, -77.2, -78])]
    write("beacon-band-after-empty-window",
          "The proximity band outlives an empty smoothing window (SPEC §6): with a 2 s window and a sighting "
          "every 5 s each average restarts, but the class is kept while the device is inside, so 3.11, 3.20 "
          "and 3.28 m stay `near` (under 3.3 m) and count; the fifth sighting (3.48 m) is `far` and exits at "
          "once (`exitDelay` 0).", catalog, readings)


def beacon_arma_precision():
    catalog = {"requests": [beacon("arma", filter="arma", exitTimeout=5)]}
    readings = [seen("phone", 0, -50)] + [seen("phone", i, -60) for i in range(1, 11)]
    write("beacon-arma-precision",
          "ARMA smoothing in double precision: a start of −50 dBm then −60 ten times gives −60 + 10·0.9¹⁰ = "
          "−56.51 dBm, reported by the timeout exit; an integer filter would stall at −51.", catalog, readings,
          args=["--until", time(30)])


def beacon_raw_advertisements():
    ibeacon = "0201061AFF4C000215" + BEACON.replace("-", "") + "0002" + "0007" + "C5"
    eddystone = "0201060303AAFE1716AAFE00EE" + "EDD1EBEAC04E5DEFA017" + "000000000123" + "0000"
    catalog = {"requests": [
        beacon("ibeacon-dock", major=2, minor=7, title="iBeacon {event}"),
        {"id": "eddystone-gate", "content": {"title": "Eddystone {event}"},
         "trigger": {"type": "beacon", "uuid": "EDD1EBEA-0000-0000-0000-C04E5DEFA017", "minor": 291, "major": 0}},
    ]}
    readings = [
        {"device": "gw-1", "time": time(0), "adv": ibeacon, "rssi": -62},
        {"device": "gw-2", "time": time(1), "adv": eddystone, "rssi": -70},
        {"device": "gw-2", "time": time(2), "adv": "1AFF4C000215" + BEACON.replace("-", "")[:10], "rssi": -70},
        {"device": "gw-1", "time": time(3), "adv": "0A16AAFE10EE0367676C00", "rssi": -70},
    ]
    write("beacon-raw-advertisements",
          "Raw BLE advertisements decoded by Fenceline itself: an iBeacon frame (Apple 0x004C, 02 15) and an "
          "Eddystone-UID frame (0xFEAA, frame 0x00; namespace → UUID by elision, instance → major/minor, "
          "txPower = ranging − 41 dBm) each enter their region; a truncated iBeacon frame and an Eddystone URL "
          "frame are reported as bad lines.", catalog, readings, args=["--until", time(60)])


def beacon_interleaved_devices():
    catalog = {"requests": [beacon("shelf", proximity="near", exitTimeout=10, title="{device} at the shelf")]}
    readings = []
    for t in range(0, 20, 2):
        readings.append(seen("picker-1", t, -62))
        if t < 8:
            readings.append(seen("picker-2", t + 0.5, -61, minor=8))
        readings.append(seen("picker-3", t + 1, -90 if t < 10 else -60))
    write("beacon-interleaved-devices",
          "Three devices interleaved in one stream, each with its own state and smoothing: picker-1 stays near, "
          "picker-2 (hearing another minor of the wildcard region) leaves and times out, picker-3 starts far and "
          "comes near once its 20 s average rises above the boundary.", catalog, readings, args=["--until", time(60)])


def tick(at):
    return {"time": at, "op": "tick"}


def interval(identifier, seconds, title, repeats=False, **extra):
    return {"id": identifier, "content": {"title": title, "body": "{request} {event} at {time}"},
            "trigger": {"type": "timeInterval", "seconds": seconds, "repeats": repeats}, **extra}


def calendar(identifier, components, zone="America/New_York", repeats=True, title=None):
    request = {"id": identifier, "trigger": {"type": "calendar", "timeZone": zone, "dateComponents": components,
                                             "repeats": repeats}}
    if title:
        request["content"] = {"title": title}
    return request


def replace_by_id():
    readings = [
        tick(time(0)),
        {"time": time(100), "op": "add", "request": interval("reminder", 300, "Reminder, moved")},
        tick(time(1000)),
    ]
    catalog = {"requests": [interval("reminder", 300, "Reminder"), interval("ping", 120, "Ping", repeats=True)]}
    write("replace-by-id",
          "Re-adding a request id mid-stream replaces it and starts its trigger afresh: `reminder` (300 s from the "
          "start) is replaced at 100 s, so it fires once at 400 s with the new content and never at 300 s; "
          "`ping` repeats every 120 s throughout.", catalog, readings)


def remove_pending():
    readings = [tick(time(0)), {"time": time(200), "op": "removePending", "ids": ["tea"]}, tick(time(900))]
    catalog = {"requests": [interval("tea", 300, "Tea is ready"), interval("coffee", 600, "Coffee is ready")]}
    write("remove-pending",
          "`removePending` before a request fires: `tea` (due at 300 s) is removed at 200 s and never fires; "
          "`coffee` (600 s) still does.", catalog, readings)


def sixty_second_rule():
    readings = [
        tick(time(0)),
        {"time": time(10), "op": "add", "request": interval("too-often", 30, "Every 30 s", repeats=True)},
        {"time": time(10), "op": "add", "request": interval("every-minute", 60, "Every minute", repeats=True)},
        {"time": time(10), "op": "add", "request": interval("once-soon", 30, "Once in 30 s")},
    ]
    write("sixty-second-rule",
          "UserNotifications' rule: a repeating time interval must be at least 60 s. The `add` of a repeating "
          "30 s interval is an invalid request, so a bad line (reported, skipped); a repeating 60 s one fires every "
          "minute and a one-shot 30 s one (allowed) fires once.", {"requests": []}, readings,
          args=["--until", time(200)])


def new_york_dst():
    readings = [tick("2026-03-06T15:00:00Z")]
    catalog = {"requests": [calendar("nine-am", {"hour": 9, "minute": 0}, title="Good morning, New York")]}
    write("new-york-daily-0900-dst",
          "A daily 09:00 America/New_York calendar trigger across both 2026 transitions: 14:00Z while EST, 13:00Z "
          "from 8 March (EDT), 14:00Z again from 1 November. The clock runs from 6 March to 3 November via "
          "`--until`; every firing is 09:00 local.", catalog, readings, args=["--until", "2026-11-03T00:00:00Z"])


def spring_forward():
    readings = [tick("2026-03-07T12:00:00Z")]
    catalog = {"requests": [calendar("half-past-two", {"hour": 2, "minute": 30}, title="02:30 in New York")]}
    write("new-york-0230-spring-forward",
          "02:30 does not exist in New York on 8 March 2026 (02:00 EST jumps to 03:00 EDT): the daily 02:30 "
          "trigger fires at the first instant after the gap, 03:00 EDT (07:00Z), once; then 02:30 EDT (06:30Z) "
          "on 9 and 10 March.", catalog, readings, args=["--until", "2026-03-10T12:00:00Z"])


def fall_back():
    readings = [tick("2026-10-31T12:00:00Z")]
    catalog = {"requests": [calendar("half-past-one", {"hour": 1, "minute": 30}, title="01:30 in New York"),
                            calendar("on-the-half-hour", {"minute": 30}, title=":30 in New York")]}
    write("new-york-0130-fall-back",
          "01:30 happens twice in New York on 1 November 2026 (02:00 EDT falls back to 01:00 EST): the daily "
          "01:30 trigger fires once, at the first occurrence (05:30Z), never at 06:30Z; an hourly :30 trigger "
          "also skips the repeated 01:30 and goes on at 02:30 EST (07:30Z).", catalog, readings,
          args=["--until", "2026-11-01T09:00:00Z"])


def schedule_gates_fence():
    office = {"timeZone": "Europe/Amsterdam", "windows": [{"days": ["mon", "tue", "wed", "thu", "fri"],
                                                          "start": "08:00", "end": "18:00"}]}
    night = {"timeZone": "Europe/Amsterdam", "windows": [{"days": ["mon"], "start": "22:00", "end": "06:00"}]}
    catalog = {"requests": [
        {**circle("office-gate", 100, hysteresis="naive", title="Office gate"), "schedule": office},
        {**circle("night-watch", 100, hysteresis="naive", title="Night watch"), "schedule": night},
        circle("always", 100, hysteresis="naive", title="Always"),
    ]}
    # 2026-03-02 is a Monday; Amsterdam is UTC+1.
    steps = [("2026-03-02T06:30:00Z", 300), ("2026-03-02T06:40:00Z", 0), ("2026-03-02T07:30:00Z", 300),
             ("2026-03-02T08:00:00Z", 0), ("2026-03-02T17:30:00Z", 300), ("2026-03-02T21:30:00Z", 0),
             ("2026-03-03T04:30:00Z", 300), ("2026-03-03T05:30:00Z", 0)]
    readings = [{"device": "guard", "time": t, "lat": offset(e)[0], "lon": offset(e)[1]} for t, e in steps]
    write("schedule-gates-fence",
          "Weekly windows gate notifications, not state: `office-gate` (weekdays 08:00–18:00 Amsterdam) reports "
          "only the transitions inside office hours, `night-watch` (Monday 22:00 to Tuesday 06:00, overnight) only "
          "those in the night, `always` every one. Muted transitions still move the state.", catalog, readings)


def calendar_rules():
    readings = [tick("2026-03-01T00:00:00Z")]
    catalog = {"requests": [
        calendar("monday-shift", {"weekday": 2, "hour": 8, "minute": 0}, zone="Europe/Amsterdam", title="Shift starts"),
        calendar("month-end", {"day": 31, "hour": 18}, zone="UTC", title="Month end"),
        calendar("second-sunday", {"weekday": 1, "weekdayOrdinal": 2}, zone="UTC", title="Second Sunday"),
        calendar("once", {"year": 2026, "month": 4, "day": 1, "hour": 12}, zone="Asia/Tokyo", repeats=False,
                 title="Once, in Tokyo"),
    ]}
    write("calendar-rules",
          "Calendar fields: Mondays 08:00 Amsterdam (07:00Z in winter, 06:00Z from 29 March), 18:00 on every 31st "
          "(only months that have one), the second Sunday at 00:00, and a one-shot 1 April 12:00 Tokyo (03:00Z) "
          "that is then delivered and no longer pending.", catalog, readings, args=["--until", "2026-06-01T00:00:00Z"])


def apns_output():
    catalog = {
        "categories": [{"id": "arrival", "options": ["customDismissAction"], "actions": [
            {"id": "ack", "title": "Acknowledge", "options": ["foreground"]},
            {"id": "reply", "title": "Reply", "textInput": {"button": "Send", "placeholder": "Message"}}]}],
        "requests": [{**circle("depot", 100, hysteresis="naive"), "devices": ["truck-17"],
                      "content": {"title": "Depot", "subtitle": "Arrivals", "body": "{device} {event} at {time}",
                                  "badge": 1, "sound": "default", "category": "arrival", "thread": "depot",
                                  "mutableContent": True, "userInfo": {"site": 4, "dock": "7B"}}}]}
    readings = [fix("truck-17", 0, offset(300)), fix("truck-17", 10, offset(0)), fix("truck-17", 20, offset(300))]
    write("apns-output",
          "`--format apns`: each event as an APNs request body (aps.alert title/subtitle/body, badge, sound, "
          "category, thread-id, mutable-content) with the userInfo keys beside `aps`, the device id and "
          "`apns-collapse-id` = the request id.", catalog, readings, args=["--format", "apns"])


def categories_in_events():
    catalog = {
        "categories": [{"id": "arrival", "actions": [
            {"id": "ack", "title": "Acknowledge", "options": ["foreground"]},
            {"id": "decline", "title": "Decline", "options": ["destructive", "authenticationRequired"]},
            {"id": "reply", "title": "Reply", "textInput": {"button": "Send", "placeholder": "Message"}}]}],
        "requests": [{**circle("dock", 100, hysteresis="naive"),
                      "content": {"title": "{device} at the dock", "body": "{event} at {time}", "category": "arrival"}}]}
    readings = [fix("van-2", 0, offset(300)), fix("van-2", 10, offset(0))]
    write("categories-in-events",
          "Content placeholders (`{device}`, `{event}`, `{time}`) are filled per event, and events carry their "
          "category's actions (options, text input) so a downstream app can render the buttons.", catalog, readings)


def expiry_and_forgetting():
    depot = circle("depot", 150, title="Depot", hysteresis="naive")
    promo = {**circle("promo", 400, title="Promo", hysteresis="naive"), "expires": time(300)}
    catalog = {"requests": [depot, promo]}
    readings = [
        fix("truck-1", 0, offset(1000)), fix("truck-2", 0, offset(0)), fix("truck-3", 0, offset(2000)),
        fix("truck-1", 60, offset(100)), fix("truck-3", 60, offset(50)),
        fix("truck-1", 120, offset(100)), fix("truck-2", 120, offset(0)),
        fix("truck-1", 240, offset(100)), fix("truck-2", 240, offset(0)),
        {"time": time(330), "op": "removeDevice", "devices": ["truck-2"]},
        fix("truck-1", 360, offset(100)), fix("truck-2", 330, offset(0)),
        fix("truck-1", 420, offset(300)), fix("truck-2", 420, offset(600)),
    ]
    write("expiry-and-forgetting",
          "Expiry and forgetting (SPEC §12) with `--device-ttl 120`. `promo` expires at 08:05: truck-1 and "
          "truck-2, inside it then, each get an `exit` with reason `expired` (truck-3 does not: it was "
          "forgotten before), and it is no longer pending. truck-3 enters both fences at 08:01 and falls "
          "silent: two minutes after its last fix it is forgotten, its fences exited (`expired`). At 08:05:30 "
          "`removeDevice` forgets truck-2 (`removed` exit from the depot); its next fix, stamped at that "
          "very second, is a first reading (silent: inside again, visit 2) and not stale, and it leaves the "
          "depot at 08:07 ending visit 2.", catalog, readings, args=["--device-ttl", "120"])


def filters_real_drive():
    """The real Višnjan drive with the faults a tracker sends injected, under position filters."""
    source = os.path.join(ROOT, "real-drive-visnjan")
    with open(os.path.join(source, "triggers.json")) as f:
        catalog = json.load(f)
    with open(os.path.join(source, "readings.ndjson")) as f:
        real = [json.loads(line) for line in f if line.strip()]

    def shifted(reading, seconds, point):
        from datetime import datetime, timedelta, timezone
        stamp = datetime.strptime(reading["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        stamp += timedelta(seconds=seconds)
        return {"device": reading["device"], "time": stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "lat": round(point[0], 7), "lon": round(point[1], 7)}

    parked = (real[0]["lat"], real[0]["lon"])
    grove = (catalog["requests"][1]["trigger"]["center"]["lat"], catalog["requests"][1]["trigger"]["center"]["lon"])
    far = offset(3200, 0, origin=(real[45]["lat"], real[45]["lon"]))
    readings = []
    for index, reading in enumerate(real):
        readings.append(reading)
        if index == 25:  # multipath: one fix in the olive grove, some 700 m off the road
            readings.append(shifted(reading, 1, grove))
        if index == 45:  # a teleport 3.2 km east for one second
            readings.append(shifted(reading, 1, far))
        if index == 60:  # a tracker whose clock jumped to 2099
            readings.append({**shifted(reading, 0, (reading["lat"], reading["lon"])), "time": "2099-01-01T00:00:00Z"})
    unfiltered = {"maxSpeed": None, "minDistance": None}
    catalog["defaults"] = {"filters": {"maxSpeed": 60, "maxFuture": 300}}
    catalog["requests"] += [
        {"id": "garage", "filters": {"minDistance": 25},
         "trigger": {"type": "region", "center": {"lat": round(parked[0], 7), "lon": round(parked[1], 7)},
                     "radius": 15, "hysteresis": "naive", "initial": "enter"}},
        {"id": "raw-garage", "filters": unfiltered,
         "trigger": {"type": "region", "center": {"lat": round(parked[0], 7), "lon": round(parked[1], 7)},
                     "radius": 15, "hysteresis": "naive", "initial": "enter"}},
        {"id": "raw-olive-grove", "filters": unfiltered,
         "trigger": dict(catalog["requests"][1]["trigger"])},
        {"id": "depot-far", "trigger": {"type": "region", "center": {"lat": far[0], "lon": far[1]}, "radius": 200}},
        {"id": "raw-depot-far", "filters": unfiltered,
         "trigger": {"type": "region", "center": {"lat": far[0], "lon": far[1]}, "radius": 200}},
    ]
    write("filters-real-drive",
          "Position filters (SPEC §12) on the real Višnjan drive (see real-drive-visnjan), with three faults "
          "injected: one fix in the olive grove 700 m off the road (multipath), one fix 3.2 km away for a "
          "second (a teleport) and one stamped 2099 (a tracker's clock). The catalog's defaults take "
          "`maxSpeed` 60 m/s and `maxFuture` 300 s; each `raw-` request removes the filters. While the car "
          "stands for a minute its real fixes wander up to 20 m: `raw-garage` (a naive 15 m circle around its "
          "first fix) exits, enters and exits again with them; `garage` (`minDistance` 25) only refreshes its "
          "reference until the car has driven 25 m, and exits once. `raw-olive-grove` enters at the "
          "multipath fix and exits 20 s later; `olive-grove` drops it (about 700 m/s) and only has the real "
          "visit. `raw-depot-far` enters and exits at the teleport; `depot-far` drops it. The 2099 line is a "
          "bad line (`future time`) that moves nothing: without it the clock would jump 79 years, fire the "
          "olive grove's dwell at once and make every later fix stale. The other fences give the same events "
          "as real-drive-visnjan, and the summary counts the filtered fixes.",
          catalog, readings)


def proximity(identifier, among, to=None, near=50, far=75, content=None, request=None, **trigger):
    """A proximity request (SPEC §12): pairs of devices, one matching `among`, the other `to`."""
    body = {"type": "proximity", "near": near, "far": far, "among": among}
    if to is not None:
        body["to"] = to
    body.update(trigger)
    built = {"id": identifier, **(request or {}), "trigger": body}
    if content:
        built["content"] = content
    return built


def haversine(a, b):
    """The engine's distance, operation for operation (Coordinate.distance(to:)), so that a boundary
    case written here is the same double there."""
    to_radians = math.pi / 180
    lat1, lat2 = a[0] * to_radians, b[0] * to_radians
    sin_half_lat = math.sin((lat2 - lat1) / 2)
    sin_half_lon = math.sin((b[1] - a[1]) * to_radians / 2)
    h = sin_half_lat * sin_half_lat + math.cos(lat1) * math.cos(lat2) * sin_half_lon * sin_half_lon
    return 2 * R * math.asin(min(1, math.sqrt(h)))


MERIDIAN_LAT = 51.478  # Greenwich: on longitude 0 a longitude difference is the other longitude, exactly


def on_parallel(metres):
    """The point `metres` east of (MERIDIAN_LAT, 0) along the parallel (west when negative), its longitude
    tuned to the last bit so that the engine's haversine gives exactly `metres` where a double allows it.
    Near longitude 0 a longitude's last bit moves the distance by about one ulp of the result, so a
    boundary fix can sit exactly on 50.0 m instead of a few nanometres inside or out."""
    if metres == 0:
        return (MERIDIAN_LAT, 0.0)
    lon = math.degrees(metres / (R * math.cos(math.radians(MERIDIAN_LAT))))
    for _ in range(3):
        lon *= abs(metres) / haversine((MERIDIAN_LAT, 0.0), (MERIDIAN_LAT, lon))
    for direction in (math.inf, -math.inf):
        candidate = lon
        for _ in range(3000):
            if haversine((MERIDIAN_LAT, 0.0), (MERIDIAN_LAT, candidate)) == abs(metres):
                return (MERIDIAN_LAT, candidate)
            candidate = math.nextafter(candidate, direction)
    return (MERIDIAN_LAT, lon)


def proximity_basics():
    # tag-1 stands on the meridian; truck-9 and truck-10 move along its parallel, so each distance is
    # the difference of two east offsets. The README line lists every event with its reason.
    def at(metres):
        point = on_parallel(metres)
        if metres in (50, 75):
            assert haversine(on_parallel(0), point) == metres, "no double lies exactly %d m away" % metres
        return point

    steps = [
        (0, "tag-1", 0), (0, "truck-9", 400), (0, "truck-10", 600),
        (10, "truck-9", 60),    # band for tag-1 while outside: nothing
        (20, "truck-9", 50),    # exactly near: enter (dock-delayed: candidate, due 30)
        (25, "truck-9", 75),    # exactly far is still the band: stays inside; the candidate is cancelled
        (30, "truck-9", 30),    # dock-delayed: a new candidate, confirmed by its timer at 40
        (45, "truck-9", 20),
        (50, "truck-10", 100),
        (60, "tag-1", 0),       # exactly tag-1's first fix + maxAge: keeps the pair
        (65, "truck-10", 60),   # 40 m behind truck-9: convoy enters; 60 m from tag-1 is the band
        (70, "truck-9", 20),
        (75, "truck-10", 40),   # 40 m from tag-1: dock, fleet and scoped enter
        (80, "truck-9", 20),
        (85, "truck-10", -20),
        (90, "truck-9", 20),
        (95, "truck-10", -90),  # 90 m past tag-1 and 110 m from truck-9: exits
        (100, "truck-9", 20),
        (110, "truck-9", 20),
        (125, "truck-9", 20),   # the clock passes 120 = tag-1's last fix + maxAge: timeouts first
        (130, "truck-9", 300),  # fleet (no maxAge) still had the pair: exit
    ]
    readings = [fix(device, t, at(east)) for t, device, east in steps]
    dock_content = {"title": "{other} at {device}", "body": "{request}: {device} {event} with {other} at {time}"}
    catalog = {"requests": [
        proximity("convoy", ["truck-*"], content={"title": "{device} and {other} {event}"}),
        proximity("dock", ["tag-*"], ["truck-*"], maxAge=60, content=dock_content),
        proximity("dock-delayed", ["tag-1"], ["truck-9"], maxAge=60, enterDelay=10),
        proximity("fleet", ["tag-*", "truck-*"], ["truck-*", "tag-*"]),
        proximity("scoped", ["tag-*"], ["truck-*"], maxAge=60, request={"devices": ["tag-1", "truck-10"]}),
    ]}
    write("proximity-basics",
          "Device proximity (SPEC §12), near 50 m, far 75 m, by hand. tag-1 stands still; truck-9 and truck-10 "
          "drive along its parallel (08:00:00 + s). `dock` (tag-* to truck-*, maxAge 60) enters tag-1/truck-9 at "
          "20 s with truck-9 exactly 50 m away (the haversine is 50.0 to the last bit: the boundary is within); "
          "60 m at 10 s (outside) and exactly 75 m at 25 s (inside) are the band, which changes nothing. "
          "tag-1 reports at 0 s and exactly at 0 + maxAge = 60 s, which keeps the pair, then falls silent: the "
          "pair ages out at 120 s (`timeout`, duration 100), and truck-9's fix at 125 s 20 m away does not "
          "enter again (the fixes are 65 s apart). `dock-delayed` (tag-1 to truck-9 by exact ids, enterDelay "
          "10): the candidate of 20 s is cancelled by the band fix at 25 s, the one of 30 s is confirmed by "
          "its timer at 40 s (`delayed`) and ages out at 120 s (duration 90). truck-10 comes 40 m behind "
          "truck-9 at 65 s and passes tag-1 (40 m at 75 s, 90 m at 95 s): `dock` enters and exits "
          "tag-1/truck-10 at 75 and 95 s (visit `dock/tag-1/2`: visits count per device over all its pairs), "
          "`scoped` (devices tag-1 and truck-10) only that pair, never tag-1/truck-9. `convoy` (truck-*, no "
          "`to`) and `fleet` (both lists match every device) pair each two devices once, `device` first in "
          "byte order (truck-10 before truck-9), and never a device with itself: convoy enters truck-10/truck-9 "
          "at 65 s and exits at 95 s (110 m); fleet has no maxAge, so tag-1/truck-9 stays until truck-9 drives "
          "300 m off at 130 s. 16 events: 8 enters (20 s: dock, fleet; 40 s: dock-delayed; 65 s: convoy, "
          "fleet; 75 s: dock, fleet, scoped) and 8 exits (95 s: convoy, dock, fleet tag-1/truck-10, fleet "
          "truck-10/truck-9, scoped; 120 s: dock, dock-delayed by timeout; 130 s: fleet). `dock` fills `{other}` "
          "in its title and body.", catalog, readings)


def shifted_time(text, seconds):
    """An RFC 3339 `...Z` time `seconds` later, in the same form."""
    from datetime import datetime, timedelta, timezone
    stamp = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc) + timedelta(seconds=seconds)
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def proximity_real_drives():
    """The real Višnjan drive twice: car-a as recorded, car-b the same fixes 40 s later, a second car
    following the first. The gap closes wherever car-a stands and opens when it drives on."""
    with open(os.path.join(ROOT, "real-drive-visnjan", "readings.ndjson")) as f:
        real = [json.loads(line) for line in f if line.strip()]
    readings = []
    for device, delay in (("car-a", 0), ("car-b", 40)):
        readings += [{**reading, "device": device, "time": shifted_time(reading["time"], delay)} for reading in real]
    readings.sort(key=lambda reading: (reading["time"], reading["device"]))
    catalog = {"requests": [
        proximity("convoy", ["car-*"], maxAge=60, enterDelay=10, exitDelay=20,
                  content={"title": "Convoy", "body": "{device} and {other}: {event} at {time}"}),
        proximity("first-meeting", ["car-a"], ["car-b"], maxAge=60, repeats=False,
                  content={"title": "{device} met {other}"}),
        proximity("fresh-fixes", ["car-a"], ["car-b"], maxAge=30),
        proximity("meet", ["car-a"], ["car-b"], maxAge=60, content={"title": "{device} {event} {other}"}),
    ]}
    write("proximity-real-drives",
          "Device proximity (SPEC §12) on a real track: the Višnjan drive of real-drive-visnjan (converted with "
          "`Tools/gpx2ndjson.py`; Garmin eTrex "
          "20x, gpxpy's test fixture `around-visnjan-with-car.gpx`, Apache-2.0: see `Data/licenses/gpxpy/`), "
          "all 104 fixes as recorded, twice: `car-a` at the recorded times and `car-b` 40 s later, a second car "
          "following the first on the same road (208 readings in time order; no fix removed or moved). Every "
          "request is car-a to car-b, near 50 m, far 75 m. The gap closes where car-a stands and opens when it "
          "drives on. `meet` (maxAge 60): enter at 06:16:30 (both at home), exit at 06:17:05 (car-a leaves), "
          "enter at 06:20:11 (car-b reaches the olive grove where car-a stands), exit at 06:21:49 (car-a drives "
          "on), enter at 06:23:16 (car-b parks beside car-a at home); inside at the end. `convoy` (`car-*`, no "
          "`to`: the pair once, car-a first in byte order; enterDelay 10, exitDelay 20, `{device}` and "
          "`{other}` in its body): the same visits, each confirmed by its timer 10 s (enters) or 20 s (exits) "
          "later. `fresh-fixes` (maxAge 30): the Garmin logs a standing car only every 15 to 49 s, so at the grove "
          "and at home the pair ages out (`timeout`) whenever one car's last fix is more than 30 s old, and "
          "enters again at the next fix: 7 enters (06:16:30, 06:20:11, 06:20:37, 06:21:26, 06:23:16, "
          "06:23:56, 06:24:36) and 7 exits, one `observed` at 06:17:05 and six by timeout at 06:20:26, "
          "06:21:06, 06:21:47, 06:23:51, 06:24:31 and 06:24:54 (car-a's log ends at 06:24:24). `first-meeting` "
          "(`repeats: false`): only the first enter, at 06:16:30.", catalog, readings)


def proximity_10k_devices():
    """9,900 tags and 100 trucks on a 2.4 km square yard. Roads run every 200 m both ways; the tags
    stand in the blocks between them, at least 70 m from any road, except 80 dock tags within 15 m of
    a road (and 70 m or more from the crossings). So a truck comes within near (30 m) of exactly the
    dock tags on its road and of nothing else, and the enters can be counted without the engine."""
    rng = random.Random(10_000)
    roads = [("east", -1200 + 200 * k) for k in range(13)] + [("north", -1200 + 200 * k) for k in range(13)]

    def place(road, along, across):
        axis, at = roads[road]
        return offset(along, at + across) if axis == "east" else offset(at + across, along)

    def noise():
        return max(-2.0, min(2.0, rng.gauss(0, 1)))

    def rounded(point):
        return (round(point[0], 7), round(point[1], 7))

    # Tag numbers are shuffled so that the docks are not the first ids.
    numbers = list(range(1, 9901))
    rng.shuffle(numbers)
    tags = []  # (name, position function of the fix index)
    docks = []  # (name, road)
    for index, number in enumerate(numbers):
        name = "tag-%04d" % number
        if index < 80:
            road, segment = rng.randrange(len(roads)), rng.randrange(12)
            along = -1200 + 200 * segment + rng.uniform(70, 130)
            across = rng.choice((-1, 1)) * rng.uniform(3, 15)
            docks.append((name, road))
            tags.append((name, lambda _, r=road, a=along, c=across: place(r, a + noise(), c + noise())))
        else:
            west, south = -1200 + 200 * rng.randrange(12), -1200 + 200 * rng.randrange(12)
            if index < 80 + 99:  # forklifts: anywhere in their block's yard at each fix
                tags.append((name, lambda _, w=west, s=south: offset(w + rng.uniform(70, 130),
                                                                      s + rng.uniform(70, 130))))
            else:
                east, north = west + rng.uniform(70, 130), south + rng.uniform(70, 130)
                tags.append((name, lambda _, e=east, n=north: offset(e + noise(), n + noise())))
    readings = []
    for name, position in tags:
        # Every tag has reported by 99 s, before any truck reaches a road, and then every 100 s, so a
        # truck's fix is never more than 100 s from a tag's (maxAge 120).
        phase = rng.randrange(100)
        for t in range(phase, 360, 100):
            readings.append((t, name, rounded(position(t))))
    trucks_on = [0] * len(roads)
    for number in range(1, 101):
        road, heading = rng.randrange(len(roads)), rng.choice((-1, 1))
        start, speed = rng.randrange(100, 130), rng.uniform(12, 16)
        trucks_on[road] += 1
        # From 150 m before the first crossing to 150 m past the last, a fix every 2 s.
        for step in range(1000):
            along = -1350 + speed * 2 * step
            if along > 1350:
                break
            point = place(road, heading * along + noise(), noise())
            readings.append((start + 2 * step, "truck-%03d" % number, rounded(point)))
    readings.sort(key=lambda reading: (reading[0], reading[1]))
    expected = sum(trucks_on[road] for _, road in docks)
    catalog = {"requests": [
        proximity("truck-at-tag", ["tag-*"], ["truck-*"], near=30, far=50, maxAge=120,
                  content={"title": "{other} at {device}"}),
    ]}
    write("proximity-10k-devices",
          "Device proximity at scale (SPEC §12): 10,000 devices, %s readings over six minutes. 9,900 tags "
          "(`tag-0001`…`tag-9900`) on a 2.4 × 2.4 km yard report every 100 s (3 or 4 fixes each, 2 m of GPS "
          "noise; 99 of them are forklifts that move about their block). Roads run every 200 m both ways; "
          "100 trucks (`truck-001`…`truck-100`) each drive one road end to end at 43–58 km/h with a fix "
          "every 2 s. Every tag stands at least 70 m from any road except 80 dock tags, within 15 m of a "
          "road and at least 70 m from its crossings, so one request (`tag-*` to `truck-*`, near 30, far "
          "50, maxAge 120) pairs a truck with exactly the docks on its road: %d enters and %d exits (all "
          "`observed`, no `timeout`), the sum over the docks of the trucks on each one's road, out of "
          "990,000 possible pairs." % (format(len(readings), ","), expected, expected),
          catalog, [fix(name, t, point) for t, name, point in readings])


if __name__ == "__main__":
    for make in (jitter_at_edge, fast_vehicle_cross, antimeridian, antimeridian_joined_ring, boundary_and_cushions, delays_and_timers,
                 min_fixes, accuracy_modes, initial_policies, dwell, repeats_false, devices_scope, stale_readings,
                 reorder_window, until_timers, control_records, polygons_and_holes, corridor, geojson_catalog,
                 event_ordering, csv_input, bad_lines, beacon_wildcards, beacon_timeout_boundary,
                 beacon_smoothing_outlier, beacon_band_after_empty_window, beacon_arma_precision, beacon_raw_advertisements, beacon_interleaved_devices,
                 replace_by_id, remove_pending, sixty_second_rule, new_york_dst, spring_forward, fall_back,
                 schedule_gates_fence, calendar_rules, apns_output, categories_in_events, filters_real_drive, expiry_and_forgetting,
                 proximity_basics, proximity_real_drives, proximity_10k_devices):
        make()
    write_index()
