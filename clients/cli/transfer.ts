// Moving bytes to and from presigned storage URLs with node:http(s): a PUT needs an exact Content-Length (S3 refuses a
// chunked body), and a streamed GET is hashed as it is written, so nothing is read twice.
import { createReadStream } from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'

const requestFor = (url: URL) => (url.protocol === 'https:' ? httpsRequest : httpRequest)

/** PUTs a file to a presigned URL, reporting bytes sent. */
export function putFile(url: string, file: string, size: number, onBytes: (n: number) => void): Promise<void> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = requestFor(target)(target, { method: 'PUT', headers: { 'content-length': String(size) } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        if (res.statusCode === 200) resolve()
        else reject(new Error(`storage refused the upload: HTTP ${res.statusCode} ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`))
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    const stream = createReadStream(file, { highWaterMark: 1 << 20 })
    stream.on('data', (c) => onBytes((c as Buffer).length))
    stream.on('error', reject)
    stream.pipe(req)
  })
}

/** A streamed GET: the response, or an error naming the status. */
export function getStream(url: string): Promise<IncomingMessage> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = requestFor(target)(target, { method: 'GET' }, (res) => {
      if (res.statusCode === 200) return resolve(res)
      res.resume()
      reject(new Error(`storage answered HTTP ${res.statusCode} to the download`))
    })
    req.on('error', reject)
    req.end()
  })
}

/** SHA-256 of a file, streamed. */
export async function sha256File(file: string, onBytes: (n: number) => void = () => {}): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(file).stream() as unknown as AsyncIterable<Uint8Array>) {
    hasher.update(chunk)
    onBytes(chunk.length)
  }
  return hasher.digest('hex')
}
