// rcp models upload: a checkpoint file or a model folder becomes a model version, its objects PUT through presigned
// URLs, then validated. Resumable: what was uploaded is written down after each object (in the config folder,
// uploads/), so a second run with the same arguments after an interruption continues the same draft version and
// uploads only the objects not yet done. An object is one PUT (the API presigns single PUTs), so an object cut off
// half way is sent again whole.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import type { components } from '../ts'
import { configDir } from './config'
import type { Command } from './context'
import { CliError, EXIT, usage } from './exit'
import { bytes, table } from './output'
import { putFile, sha256File } from './transfer'

type Format = components['schemas']['CreateModelVersionBodyDto']['format']
type Version = components['schemas']['ModelVersionDto']
const FORMATS: readonly Format[] = ['openpi', 'lerobot', 'onnx']

interface LocalObject {
  /** The object key relative to the prefix (a folder upload) or the checkpoint's own name. */
  key: string
  file: string
  sizeBytes: number
  sha256: string
}

interface UploadState {
  modelVersionId: string
  done: string[]
}

function filesOf(root: string): { key: string; file: string }[] {
  if (statSync(root).isFile()) return [{ key: basename(root), file: root }]
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((p) => ({ key: p.split('\\').join('/'), file: join(root, p) }))
    .filter((o) => statSync(o.file).isFile())
    .sort((a, b) => (a.key < b.key ? -1 : 1))
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'model'

/** A UUID-shaped Idempotency-Key from the upload's identity: a run killed between the create and writing its state down
 *  replays the same version instead of making a second one. */
const keyFrom = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`

export async function uploadModel(cmd: Command): Promise<void> {
  const [path] = cmd.args
  if (!path) throw usage('rcp models upload <file|folder> --name <name> --format openpi|lerobot|onnx [--prefix <key prefix>]')
  const name = cmd.flags.required('name')
  const format = cmd.flags.required('format') as Format
  if (!FORMATS.includes(format)) throw usage(`--format must be one of ${FORMATS.join(', ')}`)
  const prefix = (cmd.flags.string('prefix') ?? `uploads/${slug(name)}`).replace(/\/+$/, '')
  cmd.flags.done()
  const root = resolve(path)
  if (!existsSync(root)) throw usage(`no such file or folder: ${path}`)
  const { rcp, credential } = cmd.client()
  const single = statSync(root).isFile()

  const found = filesOf(root)
  if (found.length === 0) throw usage(`${path} holds no files`)
  const total = found.reduce((n, o) => n + statSync(o.file).size, 0)
  const hashing = cmd.out.progress('hashing  ', total)
  let hashed = 0
  const objects: LocalObject[] = []
  for (const o of found) {
    const sizeBytes = statSync(o.file).size
    const sha256 = await sha256File(o.file, (n) => hashing.update((hashed += n)))
    objects.push({ ...o, sizeBytes, sha256 })
  }
  hashing.finish()

  // The upload's identity: where to, as whom, what. Another file content is another upload.
  const identity = new Bun.CryptoHasher('sha256')
    .update(JSON.stringify([cmd.apiUrl(), credential.tenantId, root, name, format, prefix, objects.map((o) => [o.key, o.sizeBytes, o.sha256])]))
    .digest('hex')
  const stateDir = join(configDir(), 'uploads')
  const stateFile = join(stateDir, `${identity.slice(0, 32)}.json`)
  let state: UploadState | null = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as UploadState) : null
  const save = (s: UploadState) => {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 })
    writeFileSync(stateFile, JSON.stringify(s), { mode: 0o600 })
  }

  let version: Version | null = null
  if (state) {
    version = await rcp
      .GET('/v1/model-versions/{modelVersionId}', { params: { path: { modelVersionId: state.modelVersionId } } })
      .then((r) => r.data.data)
      .catch(() => null)
    if (version?.status === 'draft') cmd.out.note(`Resuming model version ${version.id}: ${state.done.length} of ${objects.length} object(s) already uploaded`)
    else if (version?.status === 'ready' || version?.status === 'validating') cmd.out.note(`Model version ${version.id} was already uploaded`)
    else {
      state = null
      version = null
    }
  }
  if (!state || !version) {
    const source = single
      ? { kind: 'imported_checkpoint' as const, path: `${prefix}/${objects[0]!.key}`, sizeBytes: objects[0]!.sizeBytes, sha256: objects[0]!.sha256 }
      : { kind: 'model_bundle' as const, prefix, objects: objects.map(({ key, sizeBytes, sha256 }) => ({ key, sizeBytes, sha256 })) }
    version = (await rcp.POST('/v1/model-versions', { body: { name, format, source }, headers: { 'Idempotency-Key': keyFrom(identity) } })).data.data
    state = { modelVersionId: version.id, done: [] }
    save(state)
    cmd.out.note(`Created model version ${version.id} (draft)`)
  }
  const modelVersionId = version.id

  if (version.status === 'draft') {
    const todo = objects.filter((o) => !state.done.includes(o.key))
    if (todo.length > 0) {
      const urls = (await rcp.POST('/v1/model-versions/{modelVersionId}/upload-urls', { params: { path: { modelVersionId } } })).data.data.uploads
      const urlOf = (o: LocalObject) => urls.find((u) => u.key === `${prefix}/${o.key}` || u.key === o.key)?.url
      const remaining = todo.reduce((n, o) => n + o.sizeBytes, 0)
      const bar = cmd.out.progress('uploading', remaining)
      let sent = 0
      for (const o of todo) {
        const url = urlOf(o)
        if (!url) throw new CliError(EXIT.failed, `the API gave no upload URL for ${o.key}`)
        await putFile(url, o.file, o.sizeBytes, (n) => bar.update((sent += n)))
        state.done.push(o.key)
        save(state)
        cmd.out.note(`uploaded ${o.key} (${bytes(o.sizeBytes)})`)
      }
      bar.finish()
    }
    await rcp.POST('/v1/model-versions/{modelVersionId}/validations', { params: { path: { modelVersionId } } })
    cmd.out.note('Validating…')
  }
  const settled = await waitFor(async () => {
    const v = (await rcp.GET('/v1/model-versions/{modelVersionId}', { params: { path: { modelVersionId } } })).data.data
    return v.status === 'ready' || v.status === 'failed' ? v : undefined
  })
  rmSync(stateFile, { force: true })
  cmd.out.result(settled, () =>
    table(
      ['ID', 'NAME', 'FORMAT', 'STATUS', 'OBJECTS', 'FAILURE'],
      [[settled.id, settled.name, settled.format, settled.status, String(objects.length), settled.failureReason]],
    ),
  )
  if (settled.status === 'failed') throw new CliError(EXIT.failed, `validation failed: ${settled.failureReason}`)
}

/** Polls once a second until `check` answers. */
export async function waitFor<T>(check: () => Promise<T | undefined>, everyMs = 1000): Promise<T> {
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    await Bun.sleep(everyMs)
  }
}
