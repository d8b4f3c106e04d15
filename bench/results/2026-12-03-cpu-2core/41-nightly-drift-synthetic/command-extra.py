import json, sys, time
from gpucomm.analysis import drift_synthetic as ds
t = time.time()
out = {"detection_5pc_1pc_k2": ds.detection(seed=4101, trials=1000, noise=0.01, kind="step", size=0.05, k=2, after=3),
       "detection_3pc_1pc_k2": ds.detection(seed=4102, trials=400, noise=0.01, kind="step", size=0.03, k=2, after=3),
       "false_alarms_k2_more": ds.false_alarms(seed=4103, nodes=4, nights=730, k=2)}
out["seconds"] = round(time.time() - t, 1)
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out, indent=1))
