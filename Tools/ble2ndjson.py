#!/usr/bin/env python3
"""Convert a position-annotated BLE track (philotuxo dataset, ../shared/data/ble) to NDJSON sightings.

Usage: Tools/ble2ndjson.py TRACK.mbd DEVICES.dev > readings.ndjson
       Tools/ble2ndjson.py TRACK.mbd DEVICES.dev --truth 3.0   # ground-truth passes per sensor

Each line of the track is one RSSI reading of the carried beacon by one of 12 fixed sensors.
Every sensor becomes a device (its alias, such as sensor10); the carried beacon, which the
dataset names only by MAC, gets the iBeacon identity below. Times are Unix seconds as recorded.
With --truth R it prints, per sensor, how often the true 3-D distance (from the camera ground
truth) crosses R metres, counting a crossing only after a 0.5 m margin (so jitter of the ground
truth itself is not counted): the number of real passes to compare the engine's events with.
"""
import argparse
import ast
import json
import math

UUID = "E78F1356-24CE-4B1E-A000-000000000001"  # assigned to beacon MAC e78f135624ce


def sensors(path):
    for line in open(path):
        if line.startswith("Dongles:"):
            return {mac: (tuple(info[0]), info[2]) for mac, info in ast.literal_eval(line[len("Dongles:"):]).items()}
    raise SystemExit("no Dongles line in %s" % path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("track")
    parser.add_argument("devices")
    parser.add_argument("--truth", type=float)
    args = parser.parse_args()
    known = sensors(args.devices)
    state = {}
    passes = {alias: 0 for _, alias in known.values()}
    for line in open(args.track):
        fields = line.strip().split(",")
        if len(fields) < 7:
            continue
        time, mac, rssi = fields[0], fields[1], int(fields[3])
        position, alias = known[mac]
        if args.truth is None:
            print(json.dumps({"device": alias, "time": float(time),
                              "beacon": {"uuid": UUID, "major": 1, "minor": 1, "rssi": rssi}}, separators=(",", ":")))
            continue
        distance = math.dist(position, tuple(map(float, fields[4:7])))
        inside = state.get(alias)
        now = distance < args.truth - 0.5 if inside is None else (distance < args.truth + 0.5 if inside else distance < args.truth - 0.5)
        if inside is not None and now != inside:
            passes[alias] += 1
        state[alias] = now
    if args.truth is not None:
        print(json.dumps({"transitions": passes, "total": sum(passes.values())}))


if __name__ == "__main__":
    main()
