#!/usr/bin/env python3
"""The shapely peer of Tools/bench: the same fences and readings, one bulk STRtree query.

Usage: bench-shapely.py CATALOG.json READINGS.ndjson
Prints the seconds the query took (points built, tree queried with `within`), nothing else.
Stateless, no hysteresis: every reading is tested against the fences' exact shapes, which is the
work a geofencing engine cannot skip. Circles become 64-segment buffers in a local metric frame
(equirectangular around the area's centre), polygons are projected the same way.
"""

import json
import math
import sys
import time

import numpy as np
import shapely

EARTH = 6_371_008.8


def main() -> None:
    catalog_path, readings_path = sys.argv[1], sys.argv[2]
    with open(catalog_path, encoding="utf-8") as handle:
        requests = json.load(handle)["requests"]
    lats, lons = [], []
    with open(readings_path, encoding="utf-8") as handle:
        for line in handle:
            reading = json.loads(line)
            lats.append(reading["lat"])
            lons.append(reading["lon"])
    lat0 = sum(lats) / len(lats)
    lon0 = sum(lons) / len(lons)
    kx = EARTH * math.cos(math.radians(lat0)) * math.pi / 180
    ky = EARTH * math.pi / 180

    def project(lon: float, lat: float) -> tuple[float, float]:
        return ((lon - lon0) * kx, (lat - lat0) * ky)

    fences = []
    for request in requests:
        trigger = request["trigger"]
        if "center" in trigger:
            x, y = project(trigger["center"]["lon"], trigger["center"]["lat"])
            fences.append(shapely.Point(x, y).buffer(trigger["radius"], quad_segs=16))
        else:
            rings = trigger["geometry"]["coordinates"]
            fences.append(shapely.Polygon(*[[project(lon, lat) for lon, lat in ring] for ring in rings]))
    tree = shapely.STRtree(fences)
    xs = (np.asarray(lons) - lon0) * kx
    ys = (np.asarray(lats) - lat0) * ky

    start = time.perf_counter()
    points = shapely.points(xs, ys)
    pairs = tree.query(points, predicate="within")
    seconds = time.perf_counter() - start
    print(f"{seconds:.6f}")
    print(f"{pairs.shape[1]} reading-fence pairs inside", file=sys.stderr)


if __name__ == "__main__":
    main()
