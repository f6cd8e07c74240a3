// Models: embodiment profiles (create, and edit their features with the profile's ETag) and the model versions
// with their validation status, a status and a project filter, and new versions uploaded from the browser with their progress
// (through our own origin: upload.ts) and validated.
import { Fragment } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, must, withEtag } from './api'
import type { PageProps } from './page'
import type { components } from './api-types.gen'
import { ProblemMessage } from './problem'
import { ProjectFilter } from './project-filter'
import { Empty, Show, StaleNotice, useAction, useLoad, usePoll, useVersionedAction, when } from './ui'
import { type Progress, uploadObject } from './upload'

type Profile = components['schemas']['EmbodimentProfileDto']
type Feature = components['schemas']['EmbodimentFeatureDto']
type ProfileBody = components['schemas']['CreateEmbodimentProfileBodyDto']
type Version = components['schemas']['ModelVersionDto']
type VersionStatus = Version['status']

/** Features as lines a person can type: `name dtype shape [kind]`, shape as comma-separated dimensions. */
const featureLines = (fs: Feature[]) => fs.map((f) => [f.name, f.dtype, f.shape.join(','), f.kind ?? ''].join(' ').trim()).join('\n')
function parseFeatures(text: string): Feature[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const [name, dtype, shape, kind] = line.split(/\s+/)
      return {
        name: name!,
        dtype: dtype as Feature['dtype'],
        shape: (shape ?? '').split(',').filter(Boolean).map(Number),
        ...(kind ? { kind: kind as NonNullable<Feature['kind']> } : {}),
      }
    })
}

export function Models({ can }: PageProps) {
  return (
    <>
      <Profiles mayWrite={can('model:write')} />
      <Versions mayWrite={can('model:write')} />
    </>
  )
}

function Profiles({ mayWrite }: { mayWrite: boolean }) {
  const [list, reload] = useLoad(() => must(api.GET('/v1/embodiment-profiles', { params: { query: { pageSize: 100 } } })), [])
  const [editing, setEditing] = useState<string | null>(null)
  const [action, run] = useAction()
  const create = (body: ProfileBody) =>
    run(async () => {
      await must(api.POST('/v1/embodiment-profiles', { body }))
      reload()
    })
  return (
    <section aria-labelledby="profiles-title">
      <h2 id="profiles-title">Embodiment profiles</h2>
      <Show loaded={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No embodiment profile yet.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Robot</th>
                  <th scope="col">Control rate</th>
                  <th scope="col">Observations</th>
                  <th scope="col">Actions</th>
                  <th scope="col">
                    <span class="sr-only">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((p) => (
                  <tr key={p.id}>
                    <td>{p.name}</td>
                    <td>{p.robotType}</td>
                    <td>{p.controlRateHz} Hz</td>
                    <td>{p.observationFeatures.map((f) => f.name).join(', ')}</td>
                    <td>{p.actionFeatures.map((f) => f.name).join(', ')}</td>
                    <td>
                      {mayWrite && (
                        <button type="button" onClick={() => setEditing(p.id)} aria-label={`Edit ${p.name}`}>
                          Edit
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
      {editing && (
        <EditProfile
          key={editing}
          id={editing}
          onDone={() => {
            setEditing(null)
            reload()
          }}
        />
      )}
      {mayWrite && (
        <>
          <h3>New profile</h3>
          <ProfileForm idPrefix="new" submit="Create profile" busy={action.busy} onSubmit={create} />
          <ProblemMessage problem={action.problem} />
        </>
      )}
    </section>
  )
}

function EditProfile({ id, onDone }: { id: string; onDone: () => void }) {
  const path = { params: { path: { profileId: id } } }
  const [loaded, reload] = useLoad(() => withEtag(api.GET('/v1/embodiment-profiles/{profileId}', path)), [id])
  const [action, guarded, stale] = useVersionedAction(reload)
  return (
    <div class="panel">
      <Show loaded={loaded}>
        {({ body: { data: p }, etag }) => (
          <>
            <h3>Edit {p.name}</h3>
            <StaleNotice problem={stale} what="profile" />
            <ProfileForm
              key={etag}
              idPrefix="edit"
              profile={p}
              submit="Save profile"
              busy={action.busy}
              onSubmit={(body) =>
                guarded(async () => {
                  await must(api.PATCH('/v1/embodiment-profiles/{profileId}', { ...path, headers: { 'if-match': etag }, body }))
                  onDone()
                })
              }
            />
            <button type="button" onClick={onDone}>
              Close
            </button>
            <ProblemMessage problem={action.problem} />
          </>
        )}
      </Show>
    </div>
  )
}

interface ProfileFormProps {
  idPrefix: string
  profile?: Profile
  submit: string
  busy: boolean
  onSubmit: (body: ProfileBody) => void
}

function ProfileForm({ idPrefix, profile, submit, busy, onSubmit }: ProfileFormProps) {
  const id = (name: string) => `${idPrefix}-${name}`
  const send = (e: Event) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget as HTMLFormElement)
    onSubmit({
      name: String(f.get('name')),
      robotType: String(f.get('robot')),
      controlRateHz: Number(f.get('rate')),
      observationFeatures: parseFeatures(String(f.get('observations'))),
      actionFeatures: parseFeatures(String(f.get('actions'))),
    })
  }
  return (
    <form onSubmit={send}>
      <label for={id('name')}>Name</label>
      <input id={id('name')} name="name" required maxLength={200} defaultValue={profile?.name} />
      <label for={id('robot')}>Robot type</label>
      <input id={id('robot')} name="robot" required defaultValue={profile?.robotType} />
      <label for={id('rate')}>Control rate, Hz (above 0, at most 1000)</label>
      <input id={id('rate')} name="rate" type="number" step="any" min="0" max="1000" required defaultValue={profile ? String(profile.controlRateHz) : ''} />
      <label for={id('observations')}>
        Observation features, one a line: name dtype shape [kind], e.g. <code>wrist uint8 224,224,3 image</code>
      </label>
      <textarea id={id('observations')} name="observations" rows={4} required defaultValue={profile ? featureLines(profile.observationFeatures) : ''} />
      <label for={id('actions')}>Action features, one a line: name dtype shape</label>
      <textarea id={id('actions')} name="actions" rows={2} required defaultValue={profile ? featureLines(profile.actionFeatures) : ''} />
      <button type="submit" disabled={busy}>
        {submit}
      </button>
    </form>
  )
}

function Versions({ mayWrite }: { mayWrite: boolean }) {
  const [status, setStatus] = useState<VersionStatus | ''>('')
  const [project, setProject] = useState('')
  const [list, reload] = useLoad(
    () => must(api.GET('/v1/model-versions', { params: { query: { pageSize: 100, status: status || undefined, projectId: project || undefined } } })),
    [status, project],
  )
  const [uploading, setUploading] = useState<Version | null>(null)
  usePoll(list.state === 'ready' && list.value.data.some((v) => v.status === 'validating'), reload)
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Model versions</h2>
      <div class="filters">
        <label for="version-status">Status</label>
        <select id="version-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as VersionStatus | '')}>
          <option value="">Any</option>
          {(['draft', 'validating', 'ready', 'failed'] as const).map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <ProjectFilter id="version-project" value={project} onChange={setProject} />
      </div>
      <Show loaded={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No model version{status ? ` ${status}` : ''}.</Empty>
          ) : (
            <table id="versions">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Format</th>
                  <th scope="col">Status</th>
                  <th scope="col">Objects</th>
                  <th scope="col">Size</th>
                  <th scope="col">Validated</th>
                  <th scope="col">
                    <span class="sr-only">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((v) => (
                  <tr key={v.id}>
                    <td>{v.name}</td>
                    <td>{v.format}</td>
                    <td>
                      {v.status}
                      {v.failureReason ? `: ${v.failureReason}` : ''}
                    </td>
                    <td>{v.objects.length}</td>
                    <td>{v.totalBytes ?? '—'}</td>
                    <td>{when(v.validatedAt)}</td>
                    <td>
                      {mayWrite && (v.status === 'draft' || v.status === 'failed') && (
                        <button type="button" onClick={() => setUploading(v)} aria-label={`Upload and validate ${v.name}`}>
                          Upload and validate
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
      {uploading && (
        <Transfer
          key={uploading.id}
          version={uploading}
          files={null}
          onDone={() => {
            setUploading(null)
            reload()
          }}
          onChange={reload}
        />
      )}
      {mayWrite && <NewVersion onChange={reload} />}
    </section>
  )
}

/** A single-file version: registered with the file's size, then uploaded and validated at once. */
function NewVersion({ onChange }: { onChange: () => void }) {
  const [action, run] = useAction()
  const [key, setKey] = useState('')
  const [started, setStarted] = useState<{ version: Version; file: File } | null>(null)
  const create = (e: Event) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget as HTMLFormElement)
    const file = f.get('file') as File
    return run(async () => {
      const { data } = await must(
        api.POST('/v1/model-versions', {
          body: {
            name: String(f.get('name')),
            format: f.get('format') as Version['format'],
            source: { kind: 'imported_checkpoint', path: key, sizeBytes: file.size },
          },
        }),
      )
      onChange()
      setStarted({ version: data, file })
    })
  }
  return (
    <>
      <h3>New model version</h3>
      <form onSubmit={create}>
        <label for="version-name">Name</label>
        <input id="version-name" name="name" required maxLength={200} />
        <label for="version-format">Format</label>
        <select id="version-format" name="format">
          {(['onnx', 'openpi', 'lerobot'] as const).map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </select>
        <label for="version-file">File (a checkpoint archive or a single-file model)</label>
        <input
          id="version-file"
          name="file"
          type="file"
          required
          onChange={(e) => {
            const f = e.currentTarget.files?.[0]
            if (f && !key) setKey(`models/${f.name}`)
          }}
        />
        <label for="version-key">Key in the tenant's bucket</label>
        <input id="version-key" name="key" required maxLength={1024} value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <button type="submit" disabled={action.busy || started !== null}>
          Create, upload and validate
        </button>
      </form>
      <ProblemMessage problem={action.problem} />
      {started && (
        <Transfer
          version={started.version}
          files={{ [started.version.objects[0]!.key]: started.file }}
          onDone={() => {
            setStarted(null)
            setKey('')
            onChange()
          }}
          onChange={onChange}
        />
      )}
    </>
  )
}

type Stage = 'choosing' | 'uploading' | 'validating' | 'done'

/** Each object's file uploaded with its progress, then the validation started and followed to its end. With `files`
 *  given it starts at once; otherwise a file is chosen for each object. */
function Transfer({ version, files, onDone, onChange }: { version: Version; files: Record<string, File> | null; onDone: () => void; onChange: () => void }) {
  const [stage, setStage] = useState<Stage>('choosing')
  const [progress, setProgress] = useState<Record<string, Progress>>({})
  const [result, setResult] = useState<Version | null>(null)
  const [action, run] = useAction()
  const chosen = useRef<Record<string, File>>({})

  const start = (picked: Record<string, File>) =>
    run(async () => {
      setStage('uploading')
      try {
        for (const o of version.objects) {
          const file = picked[o.key]
          if (file) await uploadObject(version.id, o.key, file, (p) => setProgress((all) => ({ ...all, [o.key]: p })))
        }
        setStage('validating')
        await must(api.POST('/v1/model-versions/{modelVersionId}/validations', { params: { path: { modelVersionId: version.id } } }))
        onChange()
        let v: Version
        do {
          await new Promise((r) => setTimeout(r, 1000))
          v = (await must(api.GET('/v1/model-versions/{modelVersionId}', { params: { path: { modelVersionId: version.id } } }))).data
        } while (v.status === 'validating')
        setResult(v)
        setStage('done')
        onChange()
      } catch (err) {
        setStage('choosing')
        throw err
      }
    })
  useEffect(() => {
    if (files) void start(files)
  }, [])

  return (
    <div class="panel" role="region" aria-label={`Upload of ${version.name}`}>
      <h3>Upload {version.name}</h3>
      {stage === 'choosing' && !files && (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            void start({ ...chosen.current })
          }}
        >
          {version.objects.map((o, i) => (
            <Fragment key={o.key}>
              <label for={`object-file-${i}`}>
                File for <code>{o.key}</code>
                {o.sizeBytes !== null ? ` (${o.sizeBytes} bytes)` : ''}
              </label>
              <input
                id={`object-file-${i}`}
                type="file"
                required
                onChange={(e) => {
                  const f = e.currentTarget.files?.[0]
                  if (f) chosen.current[o.key] = f
                }}
              />
            </Fragment>
          ))}
          <button type="submit" disabled={action.busy}>
            Upload and validate
          </button>
        </form>
      )}
      {version.objects
        .filter((o) => progress[o.key])
        .map((o) => {
          const p = progress[o.key]!
          const percent = p.total > 0 ? Math.floor((100 * p.sent) / p.total) : 100
          return (
            <p key={o.key} class="progress">
              <label>
                Upload of <code>{o.key}</code>{' '}
                <progress max={p.total} value={p.sent} data-percent={percent}>
                  {percent}%
                </progress>
              </label>{' '}
              <span class="percent">{percent}%</span> ({p.sent} of {p.total} bytes)
            </p>
          )
        })}
      {stage === 'validating' && (
        <p role="status" class="loading">
          Validating: every object's size and SHA-256 is measured in storage…
        </p>
      )}
      {stage === 'done' && result && (
        <p role="status" id="transfer-result" class={result.status === 'ready' ? 'ok' : undefined}>
          {result.name} is {result.status}
          {result.failureReason ? `: ${result.failureReason}` : ''}.
        </p>
      )}
      <ProblemMessage problem={action.problem} />
      <button type="button" onClick={onDone} disabled={stage === 'uploading' || stage === 'validating'}>
        Close
      </button>
    </div>
  )
}
