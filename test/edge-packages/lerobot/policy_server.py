"""LeRobot 0.4.4's own async PolicyServer (gRPC AsyncInference, pickled TimedObservation/TimedAction, its observation
filter, queue and timing), with one part replaced: the policy. A stand-in policy answers every observation it infers
with a chunk whose action for control step t is t in every joint, so the robot's side can tell which step each
applied action was meant for. Loading a real checkpoint (SendPolicyInstructions) is the one thing skipped.

  python policy_server.py CHUNK_DELAY_S         binds a port the system chooses on 127.0.0.1 (a port chosen by the
                                               caller can be taken by another process's connection before the bind),
                                               writes {"event": "listening", "port"}, then serves until killed;
                                               writes one JSON line per event to stdout: {"event": "observation",
                                               "timestep", "must_go"} per SendObservations, {"event": "inference",
                                               "timestep"} per chunk inferred.
"""

import json
import pickle  # nosec - LeRobot's transport; the server binds 127.0.0.1
import sys
import threading
import time
from concurrent import futures

import grpc
import torch
from lerobot.async_inference.configs import PolicyServerConfig
from lerobot.async_inference.constants import SUPPORTED_POLICIES
from lerobot.async_inference.helpers import RemotePolicyConfig, TimedAction, TimedObservation
from lerobot.async_inference.policy_server import PolicyServer
from lerobot.transport import services_pb2, services_pb2_grpc

_print_lock = threading.Lock()


def emit(**event: object) -> None:
    with _print_lock:
        print(json.dumps(event), flush=True)


class StandInPolicyServer(PolicyServer):
    def __init__(self, config: PolicyServerConfig, chunk_delay_s: float) -> None:
        super().__init__(config)
        self.chunk_delay_s = chunk_delay_s
        self.action_dim = 0

    def SendPolicyInstructions(self, request, context):  # noqa: N802 - gRPC method name
        specs = pickle.loads(request.data)  # nosec
        if not isinstance(specs, RemotePolicyConfig) or specs.policy_type not in SUPPORTED_POLICIES:
            raise TypeError(f"unexpected policy instructions: {specs!r}")
        self.policy_type, self.device = specs.policy_type, specs.device
        self.lerobot_features, self.actions_per_chunk = specs.lerobot_features, specs.actions_per_chunk
        # The client sends its observation features only; the test robot's actions are its joints, as its state is.
        self.action_dim = len(specs.lerobot_features["observation.state"]["names"])
        emit(event="instructions", policy_type=specs.policy_type, actions_per_chunk=specs.actions_per_chunk,
             features=sorted(specs.lerobot_features))
        return services_pb2.Empty()

    def _enqueue_observation(self, obs: TimedObservation) -> bool:
        emit(event="observation", timestep=obs.get_timestep(), must_go=bool(obs.must_go))
        return super()._enqueue_observation(obs)

    def _predict_action_chunk(self, observation_t: TimedObservation) -> list:
        self.last_processed_obs = observation_t  # as LeRobot's own does, for its similarity filter
        t0 = observation_t.get_timestep()
        emit(event="inference", timestep=t0)
        time.sleep(self.chunk_delay_s)
        chunk = [torch.full((self.action_dim,), float(t0 + i)) for i in range(self.actions_per_chunk)]
        return self._time_action_chunk(observation_t.get_timestamp(), chunk, t0)


def main() -> None:
    delay = float(sys.argv[1])
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    port = server.add_insecure_port("127.0.0.1:0")
    config = PolicyServerConfig(host="127.0.0.1", port=port, fps=50)
    services_pb2_grpc.add_AsyncInferenceServicer_to_server(StandInPolicyServer(config, delay), server)
    server.start()
    emit(event="listening", port=port)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
