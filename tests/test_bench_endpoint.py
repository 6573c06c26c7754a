"""``python -m bench.endpoint --quick`` end to end: a real ``cairn serve`` child on a tiny synthetic vault in a temp
folder, every phase run for a short while, the JSON written with every figure the benchmark promises.

Timings are not asserted (they depend on the machine and on whatever else it is running); behaviour is: the events
were acknowledged and none was mistaken for a duplicate, recalls answered under the mixed load, and the 128-client
storm got nothing but 2xx, 429 and 503 back, with no broken connection.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import endpoint

PHASE_KEYS = {"elapsed_s", "requests", "errors", "duplicates", "clients", "server_cpu_cores", "client_cpu_cores"}


def test_quick_run_reports_every_phase_and_a_clean_storm(tmp_path: Path) -> None:
    out = tmp_path / "endpoint.json"
    endpoint.main(["--quick", "--facts", "400", "--cache", str(tmp_path / "cache"), "--json", str(out)])

    report = json.loads(out.read_text())
    for key in (
        "machine",
        "command",
        "parameters",
        "targets",
        "pass",
        "server",
        "startup_settle",
        "idle",
        "ingest",
        "mixed",
        "pre_storm_baseline",
        "storm",
        "recovery",
        "floor",
        "numpy_scan_ms",
        "ratios",
    ):
        assert key in report, key
    assert report["parameters"]["quick"] is True
    assert report["parameters"]["facts"] == 400
    assert set(report["pass"]) == {
        "ingest_events_per_s",
        "ingest_p95_ms",
        "mixed_recall_p95_ms",
        "storm_only_2xx_429_503",
        "recovery_s",
        "ingest_rate_vs_floor",
        "ingest_p95_vs_floor",
        "mixed_recall_p95_vs_numpy_scan",
    }
    assert all(isinstance(value, bool) for value in report["pass"].values())

    for name in ("ingest", "mixed", "storm"):
        assert set(report[name]) >= PHASE_KEYS, name

    ingest = report["ingest"]
    assert ingest["ingest"]["ok"] > 0
    assert set(ingest["ingest"]["statuses"]) == {"202"}
    assert ingest["duplicates"] == 0  # distinct turns: every acknowledgement is a new event
    assert not ingest["errors"]
    assert set(ingest["ingest"]["latency_ms"]) == {"p50", "p95", "p99", "max"}

    mixed = report["mixed"]
    assert mixed["recall"]["ok"] > 0 and mixed["ingest"]["ok"] > 0
    assert report["idle"]["first_recall"]["status"] == 200

    storm = report["storm"]
    assert storm["clients"] == 128
    assert storm["requests"] > 128
    assert storm["only_2xx_429_503"] is True, (storm["unexpected_statuses"], storm["errors"])
    assert report["pass"]["storm_only_2xx_429_503"] is True
    codes = {int(code) for kind in ("ingest", "recall") for code in storm.get(kind, {}).get("statuses", {})}
    assert codes and codes <= {200, 202, 429, 503}

    recovery = report["recovery"]
    assert {"recovered", "recovery_s", "limits_ms", "probes"} <= set(recovery)
    assert recovery["probes"] > 0
    assert report["server"]["stop_s"] >= 0

    # the yardsticks: the bare stack took the same ingest load, the scan ran over the vault's vectors
    floor = report["floor"]
    assert floor["clients"] == report["parameters"]["ingest_clients"]
    assert floor["ingest"]["ok"] > 0 and set(floor["ingest"]["statuses"]) == {"202"}
    assert report["numpy_scan_ms"]["vectors"] > 0 and report["numpy_scan_ms"]["p95"] > 0
    ratios = report["ratios"]
    assert ratios["ingest_rate_vs_floor"] == round(ingest["ingest"]["per_s"] / floor["ingest"]["per_s"], 3)
    assert ratios["mixed_recall_p95_vs_numpy_scan"] is not None and ratios["mixed_recall_p95_vs_numpy_scan"] > 0
