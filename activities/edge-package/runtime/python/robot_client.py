"""The robot-side openpi client of an edge package: drives the robot (or `steps` synthetic observations with
useFakeTransport) through openpi_client's Runtime against a websocket policy server, checks every action chunk
against the embodiment profile and reports the run.

Environment: RCP_MANIFEST (default ../manifest.json), RCP_API_BASE / RCP_TOKEN (run report), RCP_SEED (synthetic
observations, default 0), RCP_MAX_HZ (override of the profile's control rate; 0 = unthrottled),
RCP_CONNECT_TIMEOUT_S (default 60), RCP_PORT (local mode: the port of the policy server beside it, default the
manifest's openpi-ws port), RCP_ACTIONS_OUT (a file that receives one JSON line per step with the observation and
the action, for checking a package end to end).
Exit codes: 0 completed, 2 contract violation, 3 server error, 4 connection lost, 5 not runnable, 130 interrupted.
"""

import datetime
import json
import logging
import os
import pathlib
import sys
import time

import numpy as np
import websockets
from openpi_client import base_policy, websocket_client_policy
from openpi_client.runtime import environment, runtime
from openpi_client.runtime.agents import policy_agent

import contract
import robot_io
import run_report

log = logging.getLogger("rcp.robot_client")

EXIT = {"completed": 0, "contract_violation": 2, "server_error": 3, "connection_lost": 4, "not_runnable": 5,
        "interrupted": 130}


class TimedPolicy(base_policy.BasePolicy):
    """Measures each round trip: observation sent → action chunk received."""

    def __init__(self, policy):
        self.policy, self.samples_ms = policy, []

    def infer(self, obs):
        started = time.perf_counter()
        action = self.policy.infer(obs)
        self.samples_ms.append((time.perf_counter() - started) * 1000)
        return action

    def reset(self):
        self.policy.reset()


class ProfileEnvironment(environment.Environment):
    def __init__(self, manifest):
        self.obs_features = manifest["embodiment"]["observationFeatures"]
        self.action_features = manifest["embodiment"]["actionFeatures"]
        self.fake, self.steps = manifest["useFakeTransport"], manifest["steps"]
        self.rng = np.random.default_rng(int(os.environ.get("RCP_SEED", "0")))
        self.steps_done, self.last_obs = 0, None
        out = os.environ.get("RCP_ACTIONS_OUT")
        self.out = open(out, "w") if out else None  # noqa: SIM115 - written through the whole run, closed in main()

    def reset(self):
        pass

    def is_episode_complete(self):
        # Runtime's own max_episode_steps would run one step more than asked.
        return self.steps_done >= self.steps

    def get_observation(self):
        if self.fake:
            self.last_obs = contract.synthetic_observation(self.obs_features, self.rng)
        else:
            self.last_obs = robot_io.read_observation(self.obs_features)
        return self.last_obs

    def apply_action(self, action):
        violations = contract.check_action(action, self.action_features)
        if violations:
            raise contract.ContractViolation(violations)
        if self.out:
            names = [f["name"] for f in self.action_features]
            line = {"step": self.steps_done, "observation": {k: np.asarray(v).tolist() for k, v in self.last_obs.items()},
                    "action": {k: np.asarray(action[k]).tolist() for k in names}}
            self.out.write(json.dumps(line) + "\n")
            self.out.flush()
        if not self.fake:
            robot_io.apply_action(action, self.action_features)
        self.steps_done += 1


def policy_address(manifest):
    if manifest["mode"] == "remote_ws":
        return manifest["remotePolicy"]["host"], manifest["remotePolicy"]["port"]
    # RCP_PORT moves the package's own server (onnx_policy_server.py reads it too): the client must follow it.
    port = int(os.environ.get("RCP_PORT") or next(p["port"] for p in manifest["wireProtocols"] if p["name"] == "openpi-ws"))
    return "localhost", port


def connect(host, port):
    """openpi-client 0.1.2 gives up on the first refused connection; a local server may still be loading."""
    deadline = time.monotonic() + float(os.environ.get("RCP_CONNECT_TIMEOUT_S", "60"))
    while True:
        try:
            return websocket_client_policy.WebsocketClientPolicy(host=host, port=port)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def run(manifest, env, timed):
    """Returns (exit reason, violations, message)."""
    try:
        host, port = policy_address(manifest)
        timed.policy = connect(host, port)
        log.info("policy server at %s:%s: %s", host, port, timed.policy.get_server_metadata())
        max_hz = float(os.environ.get("RCP_MAX_HZ", manifest["embodiment"]["controlRateHz"]))
        runtime.Runtime(env, policy_agent.PolicyAgent(timed), [], max_hz=max_hz).run()
        return "completed", [], f"completed {env.steps_done} steps"
    except contract.ContractViolation as v:
        return "contract_violation", v.violations, str(v)
    except NotImplementedError as e:
        return "not_runnable", [], str(e)
    except websockets.ConnectionClosed as e:
        return "connection_lost", [], f"connection to the policy server lost: {e}"
    except OSError as e:
        return "connection_lost", [], f"policy server unreachable: {e}"
    except RuntimeError as e:  # openpi_client raises it for a text frame: the server's error
        return "server_error", [], " ".join(str(e).split())[:500]
    except KeyboardInterrupt:
        return "interrupted", [], "interrupted"


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    here = pathlib.Path(__file__).resolve().parent
    manifest = json.loads(pathlib.Path(os.environ.get("RCP_MANIFEST", here.parent / "manifest.json")).read_text())
    started = datetime.datetime.now(datetime.timezone.utc).isoformat()
    env, timed = ProfileEnvironment(manifest), TimedPolicy(None)
    reason, violations, message = run(manifest, env, timed)
    if env.out:
        env.out.close()
    run_report.post_report(manifest, {
        "stepsDone": env.steps_done, "latencyMs": run_report.latency(timed.samples_ms),
        "contractViolations": len(violations), "exitReason": reason, "violations": violations[:20],
        "startedAt": started, "finishedAt": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    })
    print(message, file=sys.stderr if EXIT[reason] else sys.stdout, flush=True)
    return EXIT[reason]


if __name__ == "__main__":
    sys.exit(main())
