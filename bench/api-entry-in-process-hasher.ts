// A prototype for `bun bench/sign-in.ts --in-process`: the API with argon2id on Bun's thread pool in the API's own
// process (Bun.password, as before issue 22 moved it into a child), everything else as bench/api-entry.ts. It
// measures what the hashing child costs a sign-in beside the rest; issue 22's reason for the child (the event loop's
// CPU share under a burst of sign-ins) is not measured here, so this entry is for that comparison only.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { plugin } from 'bun'

const real = join(import.meta.dir, '../api/identity/password-hasher.ts')
// The product's parameters, read from its source: importing that module here would load the child-process version.
const params = /export const ARGON2 = (\{[^}]*\}) as const/.exec(readFileSync(real, 'utf8'))?.[1]
if (!params) throw new Error('ARGON2 not found in api/identity/password-hasher.ts')

plugin({
  name: 'in-process password hasher',
  setup(build) {
    build.onLoad({ filter: /api\/identity\/password-hasher\.ts$/ }, () => ({
      loader: 'ts',
      contents: `
        export const ARGON2 = ${params} as const
        export const HASHER_NICE = 0
        export class PasswordHasher {
          hash(password: string) { return Bun.password.hash(password, ARGON2) }
          verify(password: string, hash: string) { return Bun.password.verify(password, hash) }
          stop() {}
        }`,
    }))
  },
})

await import('./api-entry')
