// Models: embodiment profiles (create, and edit their features with the profile's ETag) and the model versions
// with their validation status. Uploading a version's files goes to the storage endpoint's presigned URLs, another
// origin this page's CSP does not reach: it stays with the API (POST /v1/model-versions/{id}/upload-urls).
import { useState } from 'preact/hooks'
import { api, must, withEtag } from './api'
import type { PageProps } from './app'
import type { components } from './api-types.gen'
import { ProblemMessage } from './problem'
import { Empty, Show, StaleNotice, useAction, useLoad, useVersionedAction, when } from './ui'

type Profile = components['schemas']['EmbodimentProfileDto']
type Feature = components['schemas']['EmbodimentFeatureDto']
type ProfileBody = components['schemas']['CreateEmbodimentProfileBodyDto']
type VersionStatus = components['schemas']['ModelVersionDto']['status']

/** Features as lines a person can type: `name dtype shape [kind]`, shape as comma-separated dimensions. */
const featureLines = (fs: Feature[]) => fs.map((f) => [f.name, f.dtype, f.shape.join(','), f.kind ?? ''].join(' ').trim()).join('\n')
function parseFeatures(text: string): Feature[] {
  return text.split('\n').map((l) => l.trim()).filter(Boolean).map((line) => {
    const [name, dtype, shape, kind] = line.split(/\s+/)
    return {
      name: name!, dtype: dtype as Feature['dtype'], shape: (shape ?? '').split(',').filter(Boolean).map(Number),
      ...(kind ? { kind: kind as NonNullable<Feature['kind']> } : {}),
    }
  })
}

export function Models({ can }: PageProps) {
  return <><Profiles mayWrite={can('model:write')} /><Versions /></>
}

function Profiles({ mayWrite }: { mayWrite: boolean }) {
  const [list, reload] = useLoad(() => must(api.GET('/v1/embodiment-profiles', { params: { query: { pageSize: 100 } } })), [])
  const [editing, setEditing] = useState<string | null>(null)
  const [action, run] = useAction()
  const create = (body: ProfileBody) => run(async () => {
    await must(api.POST('/v1/embodiment-profiles', { body }))
    reload()
  })
  return (
    <section aria-labelledby="profiles-title">
      <h2 id="profiles-title">Embodiment profiles</h2>
      <Show loaded={list}>
        {(page) => page.data.length === 0 ? <Empty>No embodiment profile yet.</Empty> : (
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Robot</th><th scope="col">Control rate</th><th scope="col">Observations</th><th scope="col">Actions</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
            <tbody>
              {page.data.map((p) => (
                <tr key={p.id}>
                  <td>{p.name}</td><td>{p.robotType}</td><td>{p.controlRateHz} Hz</td>
                  <td>{p.observationFeatures.map((f) => f.name).join(', ')}</td><td>{p.actionFeatures.map((f) => f.name).join(', ')}</td>
                  <td>{mayWrite && <button type="button" onClick={() => setEditing(p.id)} aria-label={`Edit ${p.name}`}>Edit</button>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      {editing && <EditProfile key={editing} id={editing} onDone={() => { setEditing(null); reload() }} />}
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
            <ProfileForm key={etag} idPrefix="edit" profile={p} submit="Save profile" busy={action.busy}
              onSubmit={(body) => guarded(async () => {
                await must(api.PATCH('/v1/embodiment-profiles/{profileId}', { ...path, headers: { 'if-match': etag }, body }))
                onDone()
              })} />
            <button type="button" onClick={onDone}>Close</button>
            <ProblemMessage problem={action.problem} />
          </>
        )}
      </Show>
    </div>
  )
}

interface ProfileFormProps { idPrefix: string; profile?: Profile; submit: string; busy: boolean; onSubmit: (body: ProfileBody) => void }

function ProfileForm({ idPrefix, profile, submit, busy, onSubmit }: ProfileFormProps) {
  const id = (name: string) => `${idPrefix}-${name}`
  const send = (e: Event) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget as HTMLFormElement)
    onSubmit({
      name: String(f.get('name')), robotType: String(f.get('robot')), controlRateHz: Number(f.get('rate')),
      observationFeatures: parseFeatures(String(f.get('observations'))), actionFeatures: parseFeatures(String(f.get('actions'))),
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
      <label for={id('observations')}>Observation features, one a line: name dtype shape [kind], e.g. <code>wrist uint8 224,224,3 image</code></label>
      <textarea id={id('observations')} name="observations" rows={4} required defaultValue={profile ? featureLines(profile.observationFeatures) : ''} />
      <label for={id('actions')}>Action features, one a line: name dtype shape</label>
      <textarea id={id('actions')} name="actions" rows={2} required defaultValue={profile ? featureLines(profile.actionFeatures) : ''} />
      <button type="submit" disabled={busy}>{submit}</button>
    </form>
  )
}

function Versions() {
  const [status, setStatus] = useState<VersionStatus | ''>('')
  const [list] = useLoad(() => must(api.GET('/v1/model-versions', { params: { query: { pageSize: 100, status: status || undefined } } })), [status])
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Model versions</h2>
      <div class="filters">
        <label for="version-status">Status</label>
        <select id="version-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as VersionStatus | '')}>
          <option value="">Any</option>
          {(['draft', 'validating', 'ready', 'failed'] as const).map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </div>
      <Show loaded={list}>
        {(page) => page.data.length === 0 ? <Empty>No model version{status ? ` ${status}` : ''}.</Empty> : (
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Format</th><th scope="col">Status</th><th scope="col">Objects</th><th scope="col">Size</th><th scope="col">Validated</th></tr></thead>
            <tbody>
              {page.data.map((v) => (
                <tr key={v.id}>
                  <td>{v.name}</td><td>{v.format}</td><td>{v.status}{v.failureReason ? `: ${v.failureReason}` : ''}</td>
                  <td>{v.objects.length}</td><td>{v.totalBytes ?? '—'}</td><td>{when(v.validatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
    </section>
  )
}
