#!/usr/bin/env python3
"""Convert the track points of a GPX 1.0/1.1 file to Fenceline NDJSON readings (SPEC §3.1).

Usage: Tools/gpx2ndjson.py TRACK.gpx [--device NAME] > readings.ndjson

The device is --device, else the track's <name>, else the file name without extension. Points
without <time> are skipped (and counted on stderr). Used to build Data/demo and the real-track
scenario from ../shared/data/gpx; the CLI reads GPX itself later (issue 6).
"""
import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET


def local(tag):
    return tag.rsplit("}", 1)[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gpx")
    parser.add_argument("--device")
    args = parser.parse_args()
    root = ET.parse(args.gpx).getroot()
    fallback = args.device or os.path.splitext(os.path.basename(args.gpx))[0]
    skipped = 0
    for track in (e for e in root if local(e.tag) == "trk"):
        name = next((c.text for c in track if local(c.tag) == "name" and c.text), None)
        device = args.device or name or fallback
        for point in track.iter():
            if local(point.tag) != "trkpt":
                continue
            time = next((c.text.strip() for c in point if local(c.tag) == "time" and c.text), None)
            if time is None:
                skipped += 1
                continue
            reading = {"device": device, "time": time, "lat": float(point.get("lat")), "lon": float(point.get("lon"))}
            elevation = next((c.text for c in point if local(c.tag) == "ele" and c.text), None)
            if elevation is not None:
                reading["altitude"] = float(elevation)
            print(json.dumps(reading, separators=(",", ":")))
    if skipped:
        print(f"gpx2ndjson: skipped {skipped} points without time", file=sys.stderr)


if __name__ == "__main__":
    main()
