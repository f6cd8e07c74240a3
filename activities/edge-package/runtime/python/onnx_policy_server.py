"""The package's local policy server for the `onnx` format: model/<file>.onnx on onnxruntime's CPU provider, served
over the openpi websocket protocol as openpi's WebsocketPolicyServer does (metadata frame first, then one msgpack
action dict per msgpack observation, errors as a text frame followed by a close, GET /healthz answers OK).

Mapping: each ONNX input is fed the observation feature of the same name, cast to the input's element type; each
ONNX output becomes the action entry of the same name. When an input's rank is one more than the observation's, a
batch axis of 1 is added, and the same leading axis is removed from every output.
It listens on 127.0.0.1 only, with no setting to widen it: its one caller is the robot client beside it, and
the protocol has no authentication (a remote_ws package ships no server; its policy is served elsewhere).
Environment: RCP_MANIFEST (default ../manifest.json), RCP_ONNX_MODEL (default: the first .onnx of modelFiles),
RCP_PORT (default: the manifest's openpi-ws port).
"""

import asyncio
import http
import json
import logging
import os
import pathlib
import time

import numpy as np
import onnxruntime
import websockets
import websockets.asyncio.server as ws_server
import websockets.frames
from openpi_client import msgpack_numpy

log = logging.getLogger("rcp.onnx_policy_server")
LOOPBACK = "127.0.0.1"

ONNX_TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int32)": np.int32,
              "tensor(int64)": np.int64, "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_}


class OnnxPolicy:
    def __init__(self, path):
        self.session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        self.inputs = self.session.get_inputs()
        self.outputs = [o.name for o in self.session.get_outputs()]

    def infer(self, obs):
        feed, batched = {}, False
        for spec in self.inputs:
            if spec.name not in obs:
                raise ValueError(f"observation lacks '{spec.name}', an input of the ONNX model")
            value = np.asarray(obs[spec.name]).astype(ONNX_TYPES.get(spec.type, np.float32), copy=False)
            if len(spec.shape) == value.ndim + 1:
                value, batched = value[np.newaxis], True
            feed[spec.name] = value
        results = self.session.run(self.outputs, feed)
        return {name: (r[0] if batched else r) for name, r in zip(self.outputs, results)}


def health_check(connection, request):
    if request.path == "/healthz":
        return connection.respond(http.HTTPStatus.OK, "OK\n")
    return None


async def serve(policy, metadata, host, port):
    async def handler(websocket):
        packer = msgpack_numpy.Packer()
        await websocket.send(packer.pack(metadata))
        while True:
            try:
                obs = msgpack_numpy.unpackb(await websocket.recv())
                started = time.monotonic()
                action = policy.infer(obs)
                action["server_timing"] = {"infer_ms": (time.monotonic() - started) * 1000}
                await websocket.send(packer.pack(action))
            except websockets.ConnectionClosed:
                return
            except Exception as error:  # noqa: BLE001 - every error goes back to the client as a text frame
                log.warning("inference failed: %s", error)
                await websocket.send(f"{type(error).__name__}: {error}")
                await websocket.close(code=websockets.frames.CloseCode.INTERNAL_ERROR, reason="inference failed")
                return

    async with ws_server.serve(handler, host, port, compression=None, max_size=None,
                               process_request=health_check) as server:
        log.info("serving %s on %s:%s", metadata["model"], host, port)
        await server.serve_forever()


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    here = pathlib.Path(__file__).resolve().parent
    manifest = json.loads(pathlib.Path(os.environ.get("RCP_MANIFEST", here.parent / "manifest.json")).read_text())
    model = os.environ.get("RCP_ONNX_MODEL") or next(f for f in manifest["modelFiles"] if f.endswith(".onnx"))
    policy = OnnxPolicy(here.parent / "model" / model)
    port = int(os.environ.get("RCP_PORT") or next(p["port"] for p in manifest["wireProtocols"] if p["name"] == "openpi-ws"))
    metadata = {"packageId": manifest["packageId"], "modelVersion": manifest["modelVersion"]["id"], "model": model,
                "inputs": [i.name for i in policy.inputs], "outputs": policy.outputs}
    asyncio.run(serve(policy, metadata, LOOPBACK, port))


if __name__ == "__main__":
    main()
