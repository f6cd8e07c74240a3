"""Control-loop statistics and the run report the client POSTs when it stops (api/edge-packages/manifest.ts
RunReport)."""

import json
import logging
import os
import urllib.request
from typing import Any, Dict, List, Optional

log = logging.getLogger("rcp.run_report")


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # nearest-rank: ceil(n * q / 100)
    return round(ordered[int(rank) - 1], 3)


def latency(samples_ms: List[float]) -> Optional[Dict[str, float]]:
    if not samples_ms:
        return None
    return {"p50": percentile(samples_ms, 50), "p99": percentile(samples_ms, 99)}


def control(controller: Any) -> Dict[str, Any]:
    """The report's control-loop fields; a run that never reached the loop (no server, a bad setting) has none."""
    if controller is None:
        return {"latencyMs": None, "inferences": 0, "underruns": 0, "queueDepth": None, "loopJitterMs": None}
    stats, depths = controller.stats, controller.stats.depths
    jitter = stats.jitter_ms(controller.period) if controller.period else []
    return {
        "latencyMs": latency(stats.round_trips_ms), "inferences": stats.inferences, "underruns": stats.underruns,
        "queueDepth": {"max": max(depths), "mean": round(sum(depths) / len(depths), 3)} if depths else None,
        "loopJitterMs": {"p99": percentile(jitter, 99)} if jitter else None,
    }


def post_report(manifest: dict, report: Dict[str, Any]) -> None:
    """Failure to report is logged, never fatal: the robot's run is over either way. The token comes only from the
    launch environment (RCP_TOKEN); the package never carries it."""
    base = (os.environ.get("RCP_API_BASE") or manifest.get("apiBase") or "").rstrip("/")
    if not base:
        log.warning("run report not sent: no RCP_API_BASE and no apiBase in the manifest")
        return
    url = f"{base}/v1/edge-inference-packages/{manifest['packageId']}/runs"
    headers = {"Content-Type": "application/json"}
    if os.environ.get("RCP_TOKEN"):
        headers["Authorization"] = f"Bearer {os.environ['RCP_TOKEN']}"
    request = urllib.request.Request(url, data=json.dumps(report).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            log.info("run report sent: HTTP %s", response.status)
    except Exception as error:  # noqa: BLE001 - any failure only loses the report
        log.warning("run report not sent to %s: %s", url, error)
