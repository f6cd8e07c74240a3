"""A LeRobot robot plugin for tests (installed as the distribution `lerobot_robot_rcp_test`, which LeRobot's
robot_client imports by its name prefix): `--robot.type=rcp_test`. It has `joints` position joints, observes a
constant state (so LeRobot's server infers only the observations that must go) and writes one JSON line per
send_action to `--robot.actions_out`: the monotonic time and the action, in joint order."""

import json
import time
from dataclasses import dataclass
from typing import Any

from lerobot.robots.config import RobotConfig
from lerobot.robots.robot import Robot


@RobotConfig.register_subclass("rcp_test")
@dataclass
class RcpTestRobotConfig(RobotConfig):
    joints: int = 2
    actions_out: str = ""


class RcpTestRobot(Robot):
    config_class = RcpTestRobotConfig
    name = "rcp_test"

    def __init__(self, config: RcpTestRobotConfig) -> None:
        super().__init__(config)
        self.config = config
        self.connected = False
        self.out = None

    @property
    def _joints(self) -> list:
        return [f"joint{i}.pos" for i in range(self.config.joints)]

    @property
    def observation_features(self) -> dict:
        return {j: float for j in self._joints}

    @property
    def action_features(self) -> dict:
        return {j: float for j in self._joints}

    @property
    def is_connected(self) -> bool:
        return self.connected

    def connect(self, calibrate: bool = True) -> None:
        self.out = open(self.config.actions_out, "a")  # noqa: SIM115 - open for the robot's life, closed on disconnect
        self.connected = True

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        pass

    def configure(self) -> None:
        pass

    def get_observation(self) -> dict:
        return {j: 0.0 for j in self._joints}

    def send_action(self, action: dict) -> dict:
        line = {"t": time.monotonic(), "action": [float(action[j]) for j in self._joints]}
        self.out.write(json.dumps(line) + "\n")
        self.out.flush()
        return action

    def disconnect(self) -> None:
        if self.out:
            self.out.close()
        self.connected = False


__all__: Any = ["RcpTestRobot", "RcpTestRobotConfig"]
