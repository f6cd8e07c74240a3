"""Writes a tiny ONNX policy whose output a test can predict: <output> = 2 * <input> + 1, batch axis first.
Usage: make_onnx_policy.py OUT INPUT_NAME OUTPUT_NAME WIDTH"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out, input_name, output_name, width = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
graph = helper.make_graph(
    [helper.make_node("Mul", [input_name, "two"], ["doubled"]), helper.make_node("Add", ["doubled", "one"], [output_name])],
    "affine_policy",
    [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, ["batch", width])],
    [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, ["batch", width])],
    initializer=[numpy_helper.from_array(np.array(2, np.float32), "two"), numpy_helper.from_array(np.array(1, np.float32), "one")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=9)
onnx.checker.check_model(model)
onnx.save(model, out)
