// The tenants the user belongs to, switching between them, and creating one (the first needs no permission; after
// that, tenant:manage where the user is now).
import { api, must } from './api'
import type { PageProps } from './page'
import { ProblemMessage } from './problem'
import { Empty, useAction } from './ui'

export function Tenants({ me, can, reloadMe }: PageProps) {
  const [action, run] = useAction()
  const mayCreate = me.memberships.length === 0 || can('tenant:manage')

  const switchTo = (membershipId: string) =>
    run(async () => {
      await must(api.POST('/v1/sessions/current-membership-switches', { body: { membershipId } }))
      reloadMe()
    })

  const create = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const data = new FormData(form)
    return run(async () => {
      await must(api.POST('/v1/tenants', { body: { name: String(data.get('name')), slug: String(data.get('slug')) } }))
      form.reset()
      reloadMe()
    })
  }

  return (
    <>
      <section aria-labelledby="mine-title">
        <h2 id="mine-title">Your tenants</h2>
        {me.memberships.length === 0 ? (
          <Empty>You belong to no tenant yet: create one below, or accept an invitation.</Empty>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Tenant</th>
                <th scope="col">Slug</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="sr-only">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {me.memberships.map((m) => (
                <tr key={m.id}>
                  <td>{m.tenantName}</td>
                  <td>{m.tenantSlug}</td>
                  <td>{m.role}</td>
                  <td>{m.status}</td>
                  <td>
                    {m.id === me.currentMembership?.id ? (
                      <strong>Current</strong>
                    ) : (
                      m.status === 'active' && (
                        <button type="button" disabled={action.busy} onClick={() => switchTo(m.id)} aria-label={`Switch to ${m.tenantName}`}>
                          Switch
                        </button>
                      )
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {mayCreate && (
        <section aria-labelledby="create-title">
          <h2 id="create-title">Create a tenant</h2>
          <form onSubmit={create}>
            <label for="tenant-name">Name</label>
            <input id="tenant-name" name="name" required maxLength={200} />
            <label for="tenant-slug">Slug (lower-case letters, digits and dashes; 3 to 63)</label>
            <input id="tenant-slug" name="slug" required pattern="[a-z0-9][a-z0-9\-]{1,61}[a-z0-9]" />
            <button type="submit" disabled={action.busy}>
              Create tenant
            </button>
          </form>
        </section>
      )}
      <ProblemMessage problem={action.problem} />
    </>
  )
}
