// What the shell (app.tsx) hands every page. In a module of its own: the shell imports every page, so a page that
// took these types from the shell would close a circle with it.
import type { Permission } from '../../identity/permissions'
import type { components } from './api-types.gen'

export type Me = components['schemas']['AuthMeResponseDto']

export interface PageProps {
  me: Me
  can: (p: Permission) => boolean
  reloadMe: () => void
}
