import glob
import json
import statistics
import sys


def reps(out):
    vals = {}
    for f in glob.glob(f"{out}/callgrind.out.*"):
        label = tot = None
        for line in open(f):
            if line.startswith("desc: Trigger: Client Request: "):
                label = line.split("Client Request: ", 1)[1].strip()
            elif line.startswith(("summary:", "totals:")) and tot is None:
                tot = int(line.split()[1])
        if label:
            vals[label] = tot
    return vals


res = {}
for cfg in sys.argv[2:]:
    v = reps(f"out-{cfg}-L{sys.argv[1]}")
    xs = [v[k] for k in sorted(v)]
    res[cfg] = xs
base = statistics.mean(res[sys.argv[2]])
for cfg, xs in res.items():
    m = statistics.mean(xs)
    print(
        f"{cfg:6s} reps={[f'{x / 1e6:.2f}M' for x in xs]} mean={m / 1e6:.2f}M spread={(max(xs) - min(xs)) / m * 100:.3f}% vs {sys.argv[2]}: {(m - base) / 1e6:+.3f}M ({(m - base) / base * 100:+.3f}%)"
    )
json.dump(res, open(f"cost_L{sys.argv[1]}.json", "w"))
