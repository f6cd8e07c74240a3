"""The embodiment contract on the robot: synthetic observations shaped by the profile, and the check of every
action chunk the policy returns.

Action rule: for an action feature of shape S the policy may answer an array of shape S (one action) or (H, *S)
with H >= 1 (a chunk of H actions over the policy's horizon); the dtype must equal the feature's dtype exactly.
Keys the profile does not name (openpi's `server_timing`, extra outputs) are ignored; a missing feature is a
violation.
"""

import numpy as np


class ContractViolation(Exception):
    def __init__(self, violations):
        self.violations = violations
        first = violations[0]
        super().__init__(
            f"contract violation: action feature '{first['feature']}' expected {first['expected']}, got {first['got']}"
        )


def describe(dtype, shape):
    return f"{dtype}[{','.join(str(d) for d in shape)}]"


def synthetic_observation(features, rng):
    obs = {}
    for f in features:
        shape, dtype = tuple(f["shape"]), f["dtype"]
        if dtype == "uint8":
            obs[f["name"]] = rng.integers(0, 256, size=shape, dtype=np.uint8)
        elif dtype == "bool":
            obs[f["name"]] = rng.integers(0, 2, size=shape).astype(bool)
        elif dtype.startswith("int"):
            obs[f["name"]] = rng.integers(-100, 100, size=shape).astype(dtype)
        else:
            obs[f["name"]] = rng.standard_normal(size=shape).astype(dtype)
    return obs


def check_action(action, features):
    """Returns the violations of one action chunk against the action features (empty when it conforms)."""
    violations = []
    for f in features:
        want = tuple(f["shape"])
        expected = f"{describe(f['dtype'], want)} or [H,{','.join(str(d) for d in want)}]"
        value = action.get(f["name"]) if isinstance(action, dict) else None
        if value is None:
            violations.append({"feature": f["name"], "expected": expected, "got": "nothing"})
            continue
        value = np.asarray(value)
        got_shape = tuple(value.shape)
        shape_ok = got_shape == want or (len(got_shape) == len(want) + 1 and got_shape[1:] == want and got_shape[0] >= 1)
        if not shape_ok or value.dtype != np.dtype(f["dtype"]):
            violations.append({"feature": f["name"], "expected": expected, "got": describe(value.dtype, got_shape)})
    return violations
