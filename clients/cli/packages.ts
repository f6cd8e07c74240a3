// rcp packages build [--wait] and rcp packages download [--verify]. A download is one pass: the archive is written,
// hashed, gunzipped and unpacked as its bytes arrive, each file hashed as it is written; then SHA256SUMS, the DSSE
// signature and the signed statement are checked (verify.ts). Any mismatch removes what was written and exits 5.
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { createGunzip } from 'node:zlib'
import type { components } from '../ts'
import type { Command } from './context'
import { CliError, EXIT, usage } from './exit'
import { waitFor } from './models'
import { bytes, table } from './output'
import { TarFormatError, TarReader } from './tar-reader'
import { getStream } from './transfer'
import { PROVENANCE, SUMS, VerificationError, verifyPackage } from './verify'

type Package = components['schemas']['EdgeInferencePackageDto']
type BuildBody = components['schemas']['EdgeInferencePackageRequestDto']

const row = (p: Package) => [p.id, p.modelVersionId, p.targetArch, p.mode, p.status, p.artifact ? bytes(p.artifact.sizeBytes) : null, p.failureReason]
const HEADER = ['ID', 'MODEL VERSION', 'ARCH', 'MODE', 'STATUS', 'SIZE', 'FAILURE']

export async function buildPackage(cmd: Command): Promise<void> {
  const f = cmd.flags
  const modelVersionId = f.required('model-version')
  const mode = (f.string('mode') ?? 'local') as BuildBody['mode']
  const body = {
    embodimentProfileId: f.required('profile'),
    mode,
    ...(f.string('remote-host') ? { remotePolicyHost: f.string('remote-host') } : {}),
    ...(f.string('remote-port') ? { remotePolicyPort: f.int('remote-port', 1, 65535) } : {}),
    ...(f.string('arch') ? { targetArch: f.string('arch') } : {}),
    ...(f.string('steps') ? { steps: f.int('steps', 1, 100_000) } : {}),
    ...(f.string('protocols') ? { wireProtocols: f.string('protocols')!.split(',') } : {}),
    ...(f.bool('fake-transport') ? { useFakeTransport: true } : {}),
  } as BuildBody
  const wait = f.bool('wait')
  f.done()
  const { rcp } = cmd.client()
  // The API checks the body (VALIDATION_ERROR names a missing or bad field).
  const ordered = (await rcp.POST('/v1/model-versions/{modelVersionId}/edge-inference-package', { params: { path: { modelVersionId } }, body })).data.data
  if (!wait) {
    cmd.out.result(ordered, () => table(HEADER, [row(ordered)]))
    return
  }
  const packageId = ordered.id
  cmd.out.note(`Package ${packageId} ${ordered.status}`)
  let status = ordered.status
  let bar: ReturnType<typeof cmd.out.progress> | null = null
  const done = await waitFor(async () => {
    const p = (await rcp.GET('/v1/edge-inference-packages/{packageId}', { params: { path: { packageId } } })).data.data
    if (p.status !== status) {
      status = p.status
      bar?.finish()
      bar = null
      cmd.out.note(`Package ${packageId} ${p.status}`)
    }
    if (p.status === 'building' && p.progress.bytesTotal) {
      bar ??= cmd.out.progress('packing  ', p.progress.bytesTotal)
      bar.update(p.progress.bytesDone)
    }
    return p.status === 'ready' || p.status === 'failed' ? p : undefined
  })
  cmd.out.result(done, () => table(HEADER, [row(done)]))
  if (done.status === 'failed') throw new CliError(EXIT.failed, `the build failed: ${done.failureReason}`)
}

export async function downloadPackage(cmd: Command): Promise<void> {
  const [packageId] = cmd.args
  if (!packageId) throw usage('rcp packages download <package id> [--verify] [--output <file.tar.gz>]')
  const check = cmd.flags.bool('verify')
  const archive = resolve(cmd.flags.string('output') ?? `${packageId}.tar.gz`)
  cmd.flags.done()
  if (!archive.endsWith('.tar.gz')) throw usage('--output must name a .tar.gz file (the package unpacks beside it, without the extension)')
  const folder = archive.slice(0, -'.tar.gz'.length)
  if (check && existsSync(folder)) throw usage(`${folder} exists: remove it or choose another --output`)
  const { rcp } = cmd.client()
  const pkg = (await rcp.GET('/v1/edge-inference-packages/{packageId}', { params: { path: { packageId } } })).data.data
  if (pkg.status !== 'ready' || !pkg.artifact) throw new CliError(EXIT.failed, `package ${packageId} is ${pkg.status}, not ready`)
  const artifact = pkg.artifact
  // The keys first: a download is not worth its bytes when the keys cannot be had.
  const keys = check ? (await cmd.anonymous().GET('/v1/edge-inference-packages/signing-keys')).data.data : []

  const digests = new Map<string, string>()
  const kept = { sums: Buffer.alloc(0), provenance: Buffer.alloc(0) }
  const cleanUp = () => {
    rmSync(archive, { force: true })
    if (check) rmSync(folder, { recursive: true, force: true })
  }
  try {
    const bar = cmd.out.progress('download ', artifact.sizeBytes)
    const received = await streamPackage(artifact.downloadUrl, archive, check ? folder : null, digests, kept, (n) => bar.update(n))
    bar.finish()
    if (received.size !== artifact.sizeBytes || received.sha256 !== artifact.sha256)
      throw new VerificationError(
        `the archive's SHA-256 ${received.sha256} (${received.size} bytes) is not the ${artifact.sha256} (${artifact.sizeBytes} bytes) the API recorded`,
      )
    if (received.failure) throw received.failure
    if (!check) {
      cmd.out.result(
        { packageId, archive, sha256: received.sha256, sizeBytes: received.size, verified: false },
        () => `Downloaded ${archive} (${bytes(received.size)}, SHA-256 matches)`,
      )
      return
    }
    const verdict = verifyPackage(digests, kept, keys)
    cmd.out.result(
      { packageId, archive, folder, sha256: received.sha256, sizeBytes: received.size, verified: true, files: verdict.files, keyId: verdict.keyId },
      () =>
        [
          `Downloaded ${archive} (${bytes(received.size)})`,
          `Unpacked into ${folder}: ${verdict.files} files, each matches ${SUMS}`,
          `Signature verified with published key ${verdict.keyId}; the signed statement matches every file`,
        ].join('\n'),
    )
  } catch (e) {
    cleanUp()
    if (e instanceof VerificationError || e instanceof TarFormatError) throw new CliError(EXIT.verification, `verification failed: ${e.message}`)
    if ((e as { code?: string }).code === 'Z_DATA_ERROR' || (e as { code?: string }).code === 'Z_BUF_ERROR')
      throw new CliError(EXIT.verification, `verification failed: the archive is not valid gzip (${(e as Error).message})`)
    throw e
  }
}

/** Writes the download to `archive` and, when `folder` is given, unpacks it there; each unpacked file's SHA-256 lands in
 *  `digests`. Answers the archive's own size and SHA-256. */
async function streamPackage(
  url: string,
  archive: string,
  folder: string | null,
  digests: Map<string, string>,
  kept: { sums: Buffer; provenance: Buffer },
  onBytes: (received: number) => void,
): Promise<{ size: number; sha256: string; failure?: unknown }> {
  const res = await getStream(url)
  const archiveHash = new Bun.CryptoHasher('sha256')
  const out = openSync(archive, 'w', 0o644)
  let size = 0
  try {
    if (!folder) {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        archiveHash.update(chunk)
        writeSync(out, chunk)
        onBytes((size += chunk.length))
      }
      return { size, sha256: archiveHash.digest('hex') }
    }
    mkdirSync(folder, { recursive: true })
    let current: { name: string; fd: number; hash: Bun.CryptoHasher; small: Buffer[] | null } | null = null
    const reader = new TarReader({
      file(name) {
        const path = join(folder, name)
        mkdirSync(dirname(path), { recursive: true })
        const small = name === SUMS || name === PROVENANCE ? [] : null
        if (digests.has(name)) throw new TarFormatError(`${name} is in the archive twice`)
        current = { name, fd: openSync(path, 'w', 0o644), hash: new Bun.CryptoHasher('sha256'), small }
      },
      data(chunk) {
        current!.hash.update(chunk)
        writeSync(current!.fd, chunk)
        current!.small?.push(Buffer.from(chunk))
      },
      end() {
        const c = current!
        closeSync(c.fd)
        digests.set(c.name, c.hash.digest('hex'))
        if (c.name === SUMS) kept.sums = Buffer.concat(c.small!)
        if (c.name === PROVENANCE) kept.provenance = Buffer.concat(c.small!)
        current = null
      },
      folder(name) {
        mkdirSync(join(folder, name), { recursive: true })
      },
    })
    const gunzip = createGunzip()
    let failure: unknown = null
    gunzip.on('data', (c: Buffer) => {
      if (failure) return
      try {
        reader.write(c)
      } catch (e) {
        failure = e
      }
    })
    const ended = new Promise<void>((resolveEnd, reject) => {
      gunzip.on('end', resolveEnd)
      gunzip.on('error', reject)
    })
    ended.catch(() => {}) // its fault is kept in `failure`
    gunzip.on('error', (e) => {
      failure ??= e
    })
    // A gzip or tar fault stops the unpacking but not the download: the archive's own SHA-256 against the API's record
    // is the first thing reported, as it says whether these are the bytes the platform built at all.
    for await (const chunk of res as AsyncIterable<Buffer>) {
      archiveHash.update(chunk)
      writeSync(out, chunk)
      onBytes((size += chunk.length))
      if (failure) continue
      if (!gunzip.write(chunk)) await Promise.race([new Promise<void>((r) => gunzip.once('drain', r)), ended]).catch((e) => (failure ??= e))
    }
    if (!failure) {
      gunzip.end()
      await ended.catch((e) => (failure ??= e))
    }
    if (current) closeSync((current as { fd: number }).fd)
    if (!failure) {
      try {
        reader.finish()
      } catch (e) {
        failure = e
      }
    }
    return { size, sha256: archiveHash.digest('hex'), failure }
  } finally {
    closeSync(out)
  }
}
