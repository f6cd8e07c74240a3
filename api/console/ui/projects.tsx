// Projects of the current tenant: the active ones and, apart, the archived ones; create and archive for
// tenant:manage. `#/projects/<id>` opens one project (project.tsx), so a project's page has an address of its own.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from './api'
import type { components } from './api-types.gen'
import type { PageProps } from './page'
import { ProblemMessage } from './problem'
import { Project } from './project'
import { Empty, Show, useAction, useLoad, when } from './ui'

type ProjectDto = components['schemas']['ProjectDto']
const PAGE_SIZE = 100

const openedId = () => location.hash.replace(/^#\/?/, '').split('/')[1] || null

function useOpenedProject(): string | null {
  const [id, setId] = useState(openedId)
  useEffect(() => {
    const onHash = () => setId(openedId())
    addEventListener('hashchange', onHash)
    return () => removeEventListener('hashchange', onHash)
  }, [])
  return id
}

export function Projects(props: PageProps) {
  const opened = useOpenedProject()
  if (opened) return <Project key={opened} id={opened} {...props} />
  return <ProjectList {...props} />
}

const listOf = (archived: 'true' | 'false') => must(api.GET('/v1/projects', { params: { query: { archived, pageSize: PAGE_SIZE } } }))

function ProjectList({ can }: PageProps) {
  const [active, reloadActive] = useLoad(() => listOf('false'), [])
  const [archived, reloadArchived] = useLoad(() => listOf('true'), [])
  const [action, run] = useAction()
  const [confirming, setConfirming] = useState<string | null>(null)
  const manage = can('tenant:manage')

  const archive = (projectId: string) =>
    run(async () => {
      await must(api.DELETE('/v1/projects/{projectId}', { params: { path: { projectId } } }))
      setConfirming(null)
      reloadActive()
      reloadArchived()
    })

  return (
    <>
      {manage && <CreateProject onCreated={reloadActive} />}
      <section aria-labelledby="projects-title">
        <h2 id="projects-title">Active projects</h2>
        <ProblemMessage problem={action.problem} />
        <Show loaded={active}>
          {(page) =>
            page.data.length === 0 ? (
              <Empty>No active project.</Empty>
            ) : (
              <ProjectTable
                id="active-projects"
                projects={page.data}
                action={(p) =>
                  manage &&
                  (confirming === p.id ? (
                    <>
                      <button type="button" class="danger" onClick={() => archive(p.id)} disabled={action.busy}>
                        Confirm archiving {p.name}
                      </button>{' '}
                      <button type="button" onClick={() => setConfirming(null)}>
                        Keep
                      </button>
                    </>
                  ) : (
                    <button type="button" onClick={() => setConfirming(p.id)} aria-label={`Archive ${p.name}`}>
                      Archive
                    </button>
                  ))
                }
              />
            )
          }
        </Show>
      </section>
      <section aria-labelledby="archived-title">
        <h2 id="archived-title">Archived projects</h2>
        <p>Archived projects keep their work and members; they cannot be brought back yet.</p>
        <Show loaded={archived}>
          {(page) =>
            page.data.length === 0 ? (
              <Empty>No archived project.</Empty>
            ) : (
              <ProjectTable id="archived-projects" projects={page.data} action={(p) => `archived ${when(p.archivedAt)}`} />
            )
          }
        </Show>
      </section>
    </>
  )
}

function ProjectTable({ id, projects, action }: { id: string; projects: ProjectDto[]; action: (p: ProjectDto) => preact.ComponentChildren }) {
  return (
    <table id={id}>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Slug</th>
          <th scope="col">Description</th>
          <th scope="col">Created</th>
          <th scope="col">
            <span class="sr-only">Action</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {projects.map((p) => (
          <tr key={p.id}>
            <td>
              <a href={`#/projects/${p.id}`}>{p.name}</a>
            </td>
            <td>
              <code>{p.slug}</code>
            </td>
            <td>{p.description ?? '—'}</td>
            <td>{when(p.createdAt)}</td>
            <td>{action(p)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function CreateProject({ onCreated }: { onCreated: () => void }) {
  const [action, run] = useAction()
  const create = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const description = String(data.get('description') ?? '').trim()
    return run(async () => {
      await must(
        api.POST('/v1/projects', {
          body: { name: String(data.get('name')), slug: String(data.get('slug')), ...(description ? { description } : {}) },
        }),
      )
      form.reset()
      onCreated()
    })
  }
  return (
    <section aria-labelledby="create-project-title">
      <h2 id="create-project-title">Create a project</h2>
      <form onSubmit={create}>
        <label for="project-name">Name</label>
        <input id="project-name" name="name" required maxLength={100} />
        <label for="project-slug">Slug (lowercase letters, digits and hyphens; unique in the tenant)</label>
        <input id="project-slug" name="slug" required maxLength={63} />
        <label for="project-description">Description (optional)</label>
        <textarea id="project-description" name="description" maxLength={2000} />
        <button type="submit" disabled={action.busy}>
          Create project
        </button>
      </form>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}
