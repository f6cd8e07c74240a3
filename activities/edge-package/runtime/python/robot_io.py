"""The robot integrator's hook: the real transport between this package and the robot's hardware.

With useFakeTransport the client never calls these. Without it, fill in both functions for your robot (its SDK,
ROS 2 topics, a serial bus...) and rebuild the image; they are the only robot-specific code of the package.
"""


def read_observation(features):
    """Return one observation: {feature name: numpy array of the feature's dtype and shape}."""
    raise NotImplementedError("real transport not wired: fill in runtime/robot_io.py read_observation()")


def apply_action(action, features):
    """Send one action to the robot, once per control tick: {feature name: array of the feature's shape}. A tick whose
    action came too late repeats the previous one: for position targets, the robot holds still."""
    raise NotImplementedError("real transport not wired: fill in runtime/robot_io.py apply_action()")
