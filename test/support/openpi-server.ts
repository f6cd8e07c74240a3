// A test policy server speaking openpi's websocket protocol (openpi/serving/websocket_policy_server.py): a msgpack
// metadata frame on connect, then one msgpack action dict per msgpack observation; a failure is answered with a
// text frame and a close, which openpi_client raises as a server error. NumPy arrays travel as openpi_client's
// msgpack_numpy encodes them: maps with *binary* keys (__ndarray__, data, dtype, shape), which msgpackr keeps
// as Map/Uint8Array keys with mapsAsObjects false.
import { Packr, Unpackr } from 'msgpackr'
import type { Feature, FeatureDtype } from '../../api/embodiment-profiles/model'

const packr = new Packr({ useRecords: false, mapsAsObjects: false, variableMapSize: true })
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: false })
const utf8 = new TextEncoder()
const key = (s: string) => utf8.encode(s)
const keyText = (k: unknown) => (k instanceof Uint8Array ? new TextDecoder().decode(k) : String(k))

/** NumPy dtype strings (little-endian) and the typed arrays that hold them. */
const numpy: Record<FeatureDtype, { str: string; array: (n: number) => ArrayBufferView & ArrayLike<number | bigint> }> = {
  float32: { str: '<f4', array: (n) => new Float32Array(n) },
  float64: { str: '<f8', array: (n) => new Float64Array(n) },
  int32: { str: '<i4', array: (n) => new Int32Array(n) },
  int64: { str: '<i8', array: (n) => new BigInt64Array(n) },
  uint8: { str: '|u1', array: (n) => new Uint8Array(n) },
  bool: { str: '|b1', array: (n) => new Uint8Array(n) },
}

export interface NdArray {
  dtype: string
  shape: number[]
  data: Uint8Array
}

/** An ndarray as openpi_client.msgpack_numpy packs it. */
export function packArray(dtype: FeatureDtype, shape: number[], fill: (i: number) => number): Map<Uint8Array, unknown> {
  const n = shape.reduce((a, b) => a * b, 1)
  const values = numpy[dtype].array(n)
  for (let i = 0; i < n; i++) (values as unknown as (number | bigint)[])[i] = dtype === 'int64' ? BigInt(Math.round(fill(i))) : fill(i)
  const data = new Uint8Array(values.buffer, values.byteOffset, values.byteLength)
  return new Map<Uint8Array, unknown>([
    [key('__ndarray__'), true],
    [key('data'), data],
    [key('dtype'), numpy[dtype].str],
    [key('shape'), shape],
  ])
}

/** A frame as openpi's peers write it (pass Maps with Uint8Array keys from packArray for arrays). */
export const encodeFrame = (value: unknown): Uint8Array => packr.pack(value)
/** A binary frame from an openpi peer, decoded (see decodeFrame). */
export const readFrame = (bytes: Uint8Array): unknown => decodeFrame(unpackr.unpack(bytes))

/** Float values of a decoded little-endian float32 ndarray. */
export const float32s = (array: NdArray): number[] => [...new Float32Array(array.data.slice().buffer)]

/** A decoded msgpack_numpy frame: maps become objects keyed by text, ndarrays become NdArray. */
export function decodeFrame(value: unknown): unknown {
  if (value instanceof Map) {
    const entries = new Map([...value].map(([k, v]) => [keyText(k), v]))
    if (entries.get('__ndarray__') === true)
      return { dtype: String(entries.get('dtype')), shape: entries.get('shape') as number[], data: entries.get('data') as Uint8Array }
    return Object.fromEntries([...entries].map(([k, v]) => [k, decodeFrame(v)]))
  }
  return Array.isArray(value) ? value.map(decodeFrame) : value
}

export interface OpenpiServerOptions {
  /** The action features the server answers with (pass mismatched ones to provoke a contract violation). */
  actions: Feature[]
  /** Leading chunk dimension of every action; null answers bare feature shapes. Default 4. */
  horizon?: number | null
  /** Answer every observation with this error text frame instead of actions. */
  failWith?: string
  /** Answer each observation this many ms late (a slow policy). */
  delayMs?: number
}

export interface OpenpiTestServer {
  port: number
  /** Every observation received, decoded. */
  observations: Record<string, NdArray>[]
  /** The close code of every connection that ended (1000: the client closed it; 1006: it went away without). */
  closes: number[]
  stop(): void
}

/** Action value i (flat index into the chunk) of request s: deterministic, so a test can tell which request and
 *  which action of its chunk the robot client applied. */
export const actionValue = (step: number, i: number) => step + i / 1000

export function startOpenpiServer(options: OpenpiServerOptions): OpenpiTestServer {
  const observations: Record<string, NdArray>[] = []
  const closes: number[] = []
  const horizon = options.horizon === undefined ? 4 : options.horizon
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req, srv) {
      if (new URL(req.url).pathname === '/healthz') return new Response('OK\n')
      return srv.upgrade(req) ? undefined : new Response('websocket only', { status: 400 })
    },
    websocket: {
      open(ws) {
        ws.send(encodeFrame({ server: 'rcp-test-openpi', actions: options.actions.map((f) => f.name) }))
      },
      close(_, code) {
        closes.push(code)
      },
      // An exception escaping a Bun websocket handler ends the process: every failure becomes an error frame.
      message(ws, message) {
        try {
          if (typeof message === 'string') throw new Error('expected a binary msgpack frame')
          const obs = readFrame(message) as Record<string, NdArray>
          if (typeof obs !== 'object' || obs === null || Array.isArray(obs)) throw new Error('an observation is a map of features')
          observations.push(obs)
          if (options.failWith) throw new Error(options.failWith)
          const step = observations.length - 1
          const action = new Map<string, unknown>(
            options.actions.map((f) => [f.name, packArray(f.dtype, horizon === null ? f.shape : [horizon, ...f.shape], (i) => actionValue(step, i))]),
          )
          if (options.delayMs) setTimeout(() => ws.readyState === 1 && ws.send(encodeFrame(action)), options.delayMs)
          else ws.send(encodeFrame(action))
        } catch (error) {
          ws.send(`Error in test policy server: ${(error as Error).message}`)
          ws.close(1011, 'Internal server error')
        }
      },
    },
  })
  return { port: server.port as number, observations, closes, stop: () => void server.stop(true) }
}

export interface OpenpiTestClient {
  metadata: unknown
  /** Sends one frame; resolves with the decoded answer, or the text of an error frame. */
  send(frame: Uint8Array | string): Promise<unknown>
  closed: Promise<number>
  close(): void
}

/** A minimal openpi websocket client on msgpackr, to talk to a policy server from a test without Python. */
export async function connectOpenpi(url: string): Promise<OpenpiTestClient> {
  const ws = new WebSocket(url)
  ws.binaryType = 'arraybuffer'
  const waiting: ((frame: unknown) => void)[] = []
  const arrived: unknown[] = []
  ws.onmessage = (event) => {
    const frame = typeof event.data === 'string' ? event.data : readFrame(new Uint8Array(event.data as ArrayBuffer))
    const next = waiting.shift()
    if (next) next(frame)
    else arrived.push(frame)
  }
  const closed = new Promise<number>((resolve) => (ws.onclose = (event) => resolve(event.code)))
  const receive = () => (arrived.length > 0 ? Promise.resolve(arrived.shift()) : new Promise<unknown>((resolve) => waiting.push(resolve)))
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve()
    ws.onerror = () => reject(new Error(`cannot connect to ${url}`))
  })
  return {
    metadata: await receive(),
    send: (frame) => {
      ws.send(frame)
      return receive()
    },
    closed,
    close: () => ws.close(),
  }
}
