// The project filter of the models and packages pages: the tenant's projects (archived ones marked), or any. Until
// the projects load, or when they cannot be read, the select offers "Any" alone and the page lists what it reaches.
import { api, must } from './api'
import { useLoad } from './ui'

export function ProjectFilter({ id, value, onChange }: { id: string; value: string; onChange: (projectId: string) => void }) {
  const [projects] = useLoad(() => must(api.GET('/v1/projects', { params: { query: { pageSize: 100 } } })), [])
  return (
    <>
      <label for={id}>Project</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">Any</option>
        {projects.state === 'ready' &&
          projects.value.data.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
              {p.archived ? ' (archived)' : ''}
            </option>
          ))}
      </select>
    </>
  )
}
