// A streaming reader of the tar archives the package builder writes (ustar, with pax `path` records for long names):
// fed the gunzipped bytes chunk by chunk, it hands each regular file's bytes to the caller as they arrive, so a package
// is unpacked, hashed and written in the one pass that downloads it. Anything but regular files and folders (links,
// devices) and any name that would land outside the target (absolute, `..`) is refused: a package has neither.

export interface EntrySink {
  /** A regular file begins; its bytes follow through `data`, then `end`. */
  file(name: string, size: number): void
  data(chunk: Uint8Array): void
  end(): void
  folder(name: string): void
}

export class TarFormatError extends Error {}

const BLOCK = 512
const text = (b: Uint8Array, from: number, len: number) => {
  const s = Buffer.from(b.buffer, b.byteOffset + from, len).toString('utf8')
  const nul = s.indexOf('\0')
  return nul === -1 ? s : s.slice(0, nul)
}

function octal(b: Uint8Array, from: number, len: number): number {
  if (b[from]! & 0x80) {
    // base-256 (GNU): sizes beyond 8 GiB
    let n = b[from]! & 0x7f
    for (let i = 1; i < len; i++) n = n * 256 + b[from + i]!
    return n
  }
  const s = text(b, from, len).trim()
  if (s === '') return 0
  if (!/^[0-7]+$/.test(s)) throw new TarFormatError(`not a tar header (field "${s}")`)
  return Number.parseInt(s, 8)
}

export function safeName(name: string): string {
  const clean = name.replace(/^\.\//, '').replace(/\/+$/, '')
  if (clean === '' || clean.startsWith('/') || clean.split('/').some((p) => p === '..' || p === ''))
    throw new TarFormatError(`unsafe entry name ${JSON.stringify(name)}`)
  return clean
}

export class TarReader {
  private buf: Uint8Array = new Uint8Array(0)
  /** Bytes of the current entry still to come, and the padding after them. */
  private remaining = 0
  private padding = 0
  private mode: 'header' | 'file' | 'pax' | 'longname' | 'skip' = 'header'
  private pax: Uint8Array[] = []
  private paxPath: string | null = null
  private ended = false

  constructor(private readonly sink: EntrySink) {}

  write(chunk: Uint8Array): void {
    let data = chunk
    while (data.length > 0) {
      if (this.mode !== 'header') {
        if (this.remaining > 0) {
          const take = Math.min(this.remaining, data.length)
          const part = data.subarray(0, take)
          if (this.mode === 'file') this.sink.data(part)
          else if (this.mode === 'pax' || this.mode === 'longname') this.pax.push(part.slice())
          this.remaining -= take
          data = data.subarray(take)
          if (this.remaining > 0) return
          if (this.mode === 'file') this.sink.end()
          if (this.mode === 'pax') this.readPax()
          if (this.mode === 'longname') this.readLongName()
        }
        const skip = Math.min(this.padding, data.length)
        this.padding -= skip
        data = data.subarray(skip)
        if (this.padding > 0) return
        this.mode = 'header'
        continue
      }
      // header: gather one block
      const need = BLOCK - this.buf.length
      const take = Math.min(need, data.length)
      this.buf = concat(this.buf, data.subarray(0, take))
      data = data.subarray(take)
      if (this.buf.length < BLOCK) return
      const header = this.buf
      this.buf = new Uint8Array(0)
      this.header(header)
    }
  }

  /** The archive ended: refuse one cut off inside an entry. */
  finish(): void {
    if (this.mode !== 'header' || this.buf.length !== 0) throw new TarFormatError('the archive ends inside an entry')
    if (!this.ended) throw new TarFormatError('the archive has no end-of-archive marker')
  }

  private header(h: Uint8Array): void {
    if (h.every((b) => b === 0)) {
      this.ended = true
      return
    }
    if (this.ended) throw new TarFormatError('data after the end-of-archive marker')
    let sum = 0
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!
    if (sum !== octal(h, 148, 8)) throw new TarFormatError('a tar header with a bad checksum')
    const size = octal(h, 124, 12)
    const type = String.fromCharCode(h[156]!)
    const prefix = text(h, 257, 6) === 'ustar' ? text(h, 345, 155) : ''
    const raw = this.paxPath ?? (prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100))
    this.paxPath = null
    this.remaining = size
    this.padding = (BLOCK - (size % BLOCK)) % BLOCK
    if (type === 'x' || type === 'L') {
      // pax extended header, or GNU tar's long name
      this.mode = type === 'x' ? 'pax' : 'longname'
      this.pax = []
    } else if (type === 'g') {
      this.mode = 'skip'
    } else if (type === '0' || type === '\0' || type === '7') {
      this.mode = 'file'
      this.sink.file(safeName(raw), size)
      if (size === 0) this.sink.end()
    } else if (type === '5') {
      this.mode = 'skip'
      // `tar -C dir .` writes the root itself as "./"
      if (raw !== './' && raw !== '.') this.sink.folder(safeName(raw))
    } else {
      throw new TarFormatError(`entry ${JSON.stringify(raw)} is not a regular file or folder (type ${JSON.stringify(type)})`)
    }
    if (this.remaining === 0 && this.mode === 'pax') this.readPax()
    if (this.remaining === 0 && this.mode === 'longname') this.readLongName()
  }

  private readLongName(): void {
    const name = Buffer.concat(this.pax).toString('utf8')
    this.pax = []
    const nul = name.indexOf('\0')
    this.paxPath = nul === -1 ? name : name.slice(0, nul)
  }

  private readPax(): void {
    // Each record is "<length> <key>=<value>\n", its length counted in bytes
    const records = Buffer.concat(this.pax)
    this.pax = []
    let at = 0
    while (at < records.length) {
      const space = records.indexOf(0x20, at)
      const len = Number.parseInt(records.subarray(at, space).toString('ascii'), 10)
      if (space === -1 || !Number.isInteger(len) || len <= 0) throw new TarFormatError('a malformed pax header')
      const record = records.subarray(space + 1, at + len - 1).toString('utf8')
      const eq = record.indexOf('=')
      if (record.slice(0, eq) === 'path') this.paxPath = record.slice(eq + 1)
      at += len
    }
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice()
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}
