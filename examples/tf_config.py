#!/usr/bin/env python3
"""tf_config.py -- print what TensorFlow's MultiWorkerMirroredStrategy would
read from TF_CONFIG, without needing TensorFlow.

    dtrun -n 4 --framework tensorflow python3 examples/tf_config.py

Each rank prints "worker I of N: me HOST:PORT, chief HOST:PORT" (worker 0
acts as chief), then, with -v as the first argument, the whole TF_CONFIG.
"""
import json
import os
import sys


def main():
    raw = os.environ.get("TF_CONFIG")
    if raw is None:
        sys.exit("TF_CONFIG is not set: run me with dtrun --framework tensorflow")
    cfg = json.loads(raw)
    workers = cfg["cluster"]["worker"]
    task = cfg["task"]
    if task["type"] != "worker" or not 0 <= task["index"] < len(workers):
        sys.exit("TF_CONFIG: bad task %r" % (task,))
    if int(os.environ.get("DTRUN_RANK", task["index"])) != task["index"]:
        sys.exit("TF_CONFIG: task index %d is not DTRUN_RANK" % task["index"])
    if len(set(workers)) != len(workers):
        sys.exit("TF_CONFIG: two workers share an address: %r" % (workers,))
    print("worker %d of %d: me %s, chief %s" % (
        task["index"], len(workers), workers[task["index"]], workers[0]))
    if sys.argv[1:2] == ["-v"]:
        print(json.dumps(cfg, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
