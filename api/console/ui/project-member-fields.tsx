// The fields a project membership is made of, shared by adding and changing one: the project role, an optional
// expiry, and an overlay of grant and deny points chosen from the catalogue's project-scope points. What the roles
// and overlay add up to is the server's to decide (its refusals are shown where the form is).
import { PROJECT_PERMISSIONS, PROJECT_ROLES, type Permission, type ProjectRole } from '../../identity/permissions'

export interface MemberFieldValues {
  role: ProjectRole
  expires: string // a date (yyyy-mm-dd), empty for never
  grant: Permission[]
  deny: Permission[]
}

/** The end of the chosen day where the browser is, as the API's datetime; null for never. */
export const expiryOf = (date: string) => (date ? new Date(`${date}T23:59:59`).toISOString() : null)

const toggle = (list: Permission[], p: Permission, on: boolean) => (on ? [...list, p] : list.filter((x) => x !== p))

export function MemberFields({ prefix, value, onChange }: { prefix: string; value: MemberFieldValues; onChange: (v: MemberFieldValues) => void }) {
  return (
    <>
      <label for={`${prefix}-role`}>Project role</label>
      <select id={`${prefix}-role`} value={value.role} onChange={(e) => onChange({ ...value, role: e.currentTarget.value as ProjectRole })}>
        {PROJECT_ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <label for={`${prefix}-expires`}>Project membership expires on (empty: never)</label>
      <input id={`${prefix}-expires`} type="date" value={value.expires} onInput={(e) => onChange({ ...value, expires: e.currentTarget.value })} />
      {(['grant', 'deny'] as const).map((kind) => (
        <fieldset key={kind}>
          <legend>{kind === 'grant' ? 'Grant beyond the roles' : 'Deny in this project'}</legend>
          {PROJECT_PERMISSIONS.map((p) => (
            <label key={p} class="check">
              <input
                type="checkbox"
                checked={value[kind].includes(p)}
                onChange={(e) => onChange({ ...value, [kind]: toggle(value[kind], p, e.currentTarget.checked) })}
              />{' '}
              {p}
            </label>
          ))}
        </fieldset>
      ))}
    </>
  )
}
