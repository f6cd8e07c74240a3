// A minimal authoritative DNS responder over UDP (RFC 1035), enough for TXT lookups: a name with records answers
// them, any other name answers NXDOMAIN. Tests publish a domain's verification record here, as its owner would.
import { afterAll, beforeAll } from 'bun:test'
import dgram from 'node:dgram'

export interface TestDns {
  /** host:port, for DOMAIN_VERIFICATION_DNS_SERVERS */
  server: string
  txt: Map<string, string[]>
  stop(): void
}

function answer(query: Buffer, txt: Map<string, string[]>): Buffer {
  let o = 12
  const labels: string[] = []
  while (query[o]) {
    labels.push(query.subarray(o + 1, o + 1 + query[o]!).toString('latin1'))
    o += query[o]! + 1
  }
  o += 5 // the root label, QTYPE and QCLASS
  const question = query.subarray(12, o)
  const qtype = question.readUInt16BE(question.length - 4)
  const values = txt.get(labels.join('.').toLowerCase())
  const records = qtype === 16 && values ? values : []
  const header = Buffer.alloc(12)
  query.copy(header, 0, 0, 2) // the id
  header.writeUInt16BE(0x8400 | (values ? 0 : 3), 2) // response, authoritative; NXDOMAIN when the name has nothing
  header.writeUInt16BE(1, 4)
  header.writeUInt16BE(records.length, 6)
  const answers = records.map((value) => {
    const text = Buffer.from(value)
    const rdata = Buffer.concat([Buffer.from([text.length]), text])
    const rr = Buffer.alloc(12)
    rr.writeUInt16BE(0xc00c, 0) // a pointer to the question's name
    rr.writeUInt16BE(16, 2)
    rr.writeUInt16BE(1, 4)
    rr.writeUInt32BE(60, 6)
    rr.writeUInt16BE(rdata.length, 10)
    return Buffer.concat([rr, rdata])
  })
  return Buffer.concat([header, question, ...answers])
}

export async function startDns(): Promise<TestDns> {
  const socket = dgram.createSocket('udp4')
  const txt = new Map<string, string[]>()
  socket.on('message', (msg, from) => socket.send(answer(msg, txt), from.port, from.address))
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  return { server: `127.0.0.1:${socket.address().port}`, txt, stop: () => socket.close() }
}

/** A responder of the file's own, started before its tests and stopped after them. Register it before anything whose
 *  beforeAll reads `server`; read its fields inside hooks and tests. */
export function useDns(): Omit<TestDns, 'stop'> {
  let dns: TestDns | undefined
  beforeAll(async () => {
    dns = await startDns()
  })
  afterAll(() => dns?.stop())
  const started = (): TestDns => {
    if (!dns) throw new Error('useDns(): its responder starts in beforeAll; read it inside a hook or a test')
    return dns
  }
  return {
    get server() {
      return started().server
    },
    get txt() {
      return started().txt
    },
  }
}
