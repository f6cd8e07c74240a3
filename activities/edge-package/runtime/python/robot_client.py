"""The robot-side openpi client of an edge package: drives the robot (or `steps` synthetic observations with
useFakeTransport) against a websocket policy server with chunked control (chunking.py): one inference per action
chunk, one action applied per tick at the profile's control rate, the next chunk asked for in the background. Every
chunk is checked against the embodiment profile, and the run is reported.

Settings (flag, or environment variable; an empty variable means the default):
  --max-hz RCP_MAX_HZ                      control rate (default the profile's; 0 = unthrottled, no underruns)
  --chunk-threshold RCP_CHUNK_THRESHOLD    ask for the next chunk when the queue holds at most this fraction of one
                                           (default 0.5; 0 = only once it is empty, as openpi's ActionChunkBroker)
  --aggregation RCP_AGGREGATION            overlapping chunks: replace (newest wins, default) or weighted
  --connect-timeout-s RCP_CONNECT_TIMEOUT_S  keep retrying the policy server this long (default 60)
  --open-timeout-s RCP_OPEN_TIMEOUT_S      one attempt's TCP connect + websocket handshake + metadata (default 10)
  --ping-interval-s RCP_PING_INTERVAL_S    websocket keepalive ping period (default 20; 0 = no keepalive)
  --ping-timeout-s RCP_PING_TIMEOUT_S      drop the connection when a ping goes unanswered this long (default 300:
                                           openpi's server answers none while it compiles on its first request;
                                           0 = never)
Also: RCP_MANIFEST (default ../manifest.json), RCP_API_BASE / RCP_TOKEN (run report), RCP_SEED (synthetic
observations, default 0), RCP_PORT (local mode: the port of the policy server beside it, default the manifest's
openpi-ws port), RCP_ACTIONS_OUT (a file that receives one JSON line per step: the action and the observation its
chunk was inferred from, for checking a package end to end).
Exit codes: 0 completed, 2 contract violation, 3 server error, 4 connection lost, 5 not runnable (also: a bad
setting), 130 interrupted.
"""

import argparse
import datetime
import json
import logging
import os
import pathlib
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import websockets
import websockets.sync.client
from openpi_client import msgpack_numpy, websocket_client_policy

import chunking
import contract
import robot_io
import run_report

log = logging.getLogger("rcp.robot_client")

EXIT = {"completed": 0, "contract_violation": 2, "server_error": 3, "connection_lost": 4, "not_runnable": 5,
        "interrupted": 130}


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would exit 2, the contract-violation code
        raise chunking.SettingError(message)


def settings(argv: List[str], manifest: dict) -> argparse.Namespace:
    def option(flag: str, variable: str, default: object, **kwargs: Any) -> None:
        parser.add_argument(flag, default=os.environ.get(variable) or default, **kwargs)  # compose passes unset as ""

    parser = Parser(prog="robot_client.py", add_help=False)
    option("--max-hz", "RCP_MAX_HZ", manifest["embodiment"]["controlRateHz"], type=float)
    option("--chunk-threshold", "RCP_CHUNK_THRESHOLD", 0.5, type=float)
    option("--aggregation", "RCP_AGGREGATION", "replace")
    option("--connect-timeout-s", "RCP_CONNECT_TIMEOUT_S", 60, type=float)
    option("--open-timeout-s", "RCP_OPEN_TIMEOUT_S", 10, type=float)
    option("--ping-interval-s", "RCP_PING_INTERVAL_S", 20, type=float)
    option("--ping-timeout-s", "RCP_PING_TIMEOUT_S", 300, type=float)
    s = parser.parse_args(argv)
    chunking.validate(s.chunk_threshold, s.aggregation)
    return s


class Policy(websocket_client_policy.WebsocketClientPolicy):
    """openpi-client's websocket policy with the launch's timeouts: its own connect takes websockets' defaults and
    waits for the metadata frame forever."""

    def __init__(self, host: str, port: int, s: argparse.Namespace) -> None:
        self._settings = s
        super().__init__(host=host, port=port)

    def _wait_for_server(self) -> Tuple[websockets.sync.client.ClientConnection, Dict]:
        s = self._settings
        conn = websockets.sync.client.connect(
            self._uri, compression=None, max_size=None, open_timeout=s.open_timeout_s,
            ping_interval=s.ping_interval_s or None, ping_timeout=s.ping_timeout_s or None)
        try:
            return conn, msgpack_numpy.unpackb(conn.recv(timeout=s.open_timeout_s))
        except BaseException:
            conn.close()
            raise

    def close(self) -> None:
        """A closing handshake, so the server sees a run end rather than a dropped connection."""
        try:
            self._ws.close()
        except Exception as error:  # noqa: BLE001 - the run is over either way
            log.warning("closing the policy connection: %s", error)


class Robot:
    """Observations in, actions out: the synthetic ones of fake transport, or robot_io.py."""

    def __init__(self, manifest: dict) -> None:
        self.obs_features = manifest["embodiment"]["observationFeatures"]
        self.action_features = manifest["embodiment"]["actionFeatures"]
        self.fake = manifest["useFakeTransport"]
        self.rng = np.random.default_rng(int(os.environ.get("RCP_SEED", "0")))
        self.steps_done, self.observations = 0, {}  # type: int, Dict[int, Dict[str, np.ndarray]]
        out = os.environ.get("RCP_ACTIONS_OUT")
        self.out = open(out, "w") if out else None  # noqa: SIM115 - written through the whole run, closed in main()

    def observe(self, step: int) -> Dict[str, np.ndarray]:
        obs = (contract.synthetic_observation(self.obs_features, self.rng) if self.fake
               else robot_io.read_observation(self.obs_features))
        if self.out:
            self.observations[step] = obs
        return obs

    def apply(self, action: chunking.Action, step: int, origin: int) -> None:
        if self.out:
            line = {"step": step, "observationStep": origin, "action": {k: v.tolist() for k, v in action.items()},
                    "observation": {k: np.asarray(v).tolist() for k, v in self.observations[origin].items()}}
            self.out.write(json.dumps(line) + "\n")
            self.out.flush()
        if not self.fake:
            robot_io.apply_action(action, self.action_features)
        self.steps_done += 1


def policy_address(manifest: dict) -> Tuple[str, int]:
    if manifest["mode"] == "remote_ws":
        return manifest["remotePolicy"]["host"], manifest["remotePolicy"]["port"]
    # RCP_PORT moves the package's own server (onnx_policy_server.py reads it too): the client must follow it.
    port = int(os.environ.get("RCP_PORT") or next(p["port"] for p in manifest["wireProtocols"] if p["name"] == "openpi-ws"))
    return "localhost", port


def connect(host: str, port: int, s: argparse.Namespace) -> Policy:
    """Retries a server that refuses or is slow to open (it may still be loading) until the connect timeout."""
    deadline = time.monotonic() + s.connect_timeout_s
    while True:
        try:
            return Policy(host, port, s)
        except OSError:  # refused, or TimeoutError: the open timeout passed
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def checked(policy: Policy, features: List[dict]) -> Callable[[Dict], Dict]:
    def infer(obs: Dict) -> Dict:
        chunk = policy.infer(obs)
        violations = contract.check_action(chunk, features)
        if violations:
            raise contract.ContractViolation(violations)
        return chunk
    return infer


def run(manifest: dict, robot: Robot, argv: List[str],
        on_controller: Callable[[chunking.ChunkedController], None]) -> Tuple[str, List[dict], str]:
    """Returns (exit reason, violations, message)."""
    policy: Optional[Policy] = None
    try:
        s = settings(argv, manifest)
        host, port = policy_address(manifest)
        policy = connect(host, port, s)
        log.info("policy server at %s:%s: %s", host, port, policy.get_server_metadata())
        controller = chunking.ChunkedController(checked(policy, robot.action_features), robot.observe, robot.apply,
                                                robot.action_features, s.max_hz, s.chunk_threshold, s.aggregation)
        on_controller(controller)
        controller.run(manifest["steps"])
        return "completed", [], f"completed {robot.steps_done} steps"
    except contract.ContractViolation as v:
        return "contract_violation", v.violations, str(v)
    except (NotImplementedError, chunking.SettingError) as e:
        return "not_runnable", [], str(e)
    except websockets.ConnectionClosed as e:
        return "connection_lost", [], f"connection to the policy server lost: {e}"
    except OSError as e:
        return "connection_lost", [], f"policy server unreachable: {e or type(e).__name__}"
    except RuntimeError as e:  # openpi_client raises it for a text frame: the server's error
        return "server_error", [], " ".join(str(e).split())[:500]
    except KeyboardInterrupt:
        return "interrupted", [], "interrupted"
    finally:
        if policy is not None:
            policy.close()


def main(argv: List[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    here = pathlib.Path(__file__).resolve().parent
    manifest = json.loads(pathlib.Path(os.environ.get("RCP_MANIFEST", here.parent / "manifest.json")).read_text())
    started = datetime.datetime.now(datetime.timezone.utc).isoformat()
    robot, controllers = Robot(manifest), []  # type: Robot, List[chunking.ChunkedController]
    reason, violations, message = run(manifest, robot, argv, controllers.append)
    if robot.out:
        robot.out.close()
    run_report.post_report(manifest, {
        "stepsDone": robot.steps_done, "contractViolations": len(violations), "exitReason": reason,
        "violations": violations[:20], **run_report.control(controllers[0] if controllers else None),
        "startedAt": started, "finishedAt": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    })
    print(message, file=sys.stderr if EXIT[reason] else sys.stdout, flush=True)
    return EXIT[reason]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
